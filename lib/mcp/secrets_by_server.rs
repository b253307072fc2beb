//! The shape `AG_MCP_HEADERS` and `AG_MCP_ENV` share: a JSON object, in an
//! environment variable, of servers (by URL or command line), each with an
//! object of names and string values. The values are secrets: no error
//! quotes one, only the name and the server it was given for.

use std::collections::HashMap;

/// Pairs of name and value, by server.
pub type ByServer = HashMap<String, Vec<(String, String)>>;

/// The text of variable `env` (`None` when it is unset or blank).
pub fn read(env: &str) -> Result<Option<String>, String> {
    match std::env::var(env) {
        Ok(text) if !text.trim().is_empty() => Ok(Some(text)),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(format!("${env} is not UTF-8")),
    }
}

/// Parses `text`, given in `env`. `shape` says what the whole must look
/// like, `what` names one entry (`header`, `variable`), and `check` refuses
/// an entry (name, value, server) with the reason, which must not quote the
/// value. Server keys are trimmed.
pub fn parse(
    env: &str,
    text: &str,
    shape: &str,
    what: &str,
    check: impl Fn(&str, &str, &str) -> Result<(), String>,
) -> Result<ByServer, String> {
    let shape = || format!("${env} must be {shape}");
    // The parser's own message may quote the text, values included.
    let v: serde_json::Value = serde_json::from_str(text).map_err(|_| shape())?;
    let servers = v.as_object().ok_or_else(shape)?;
    let mut out = ByServer::new();
    for (server, entries) in servers {
        let entries = entries.as_object().ok_or_else(shape)?;
        let mut list = Vec::new();
        for (name, value) in entries {
            let value = value
                .as_str()
                .ok_or_else(|| format!("${env}: {what} `{name}` of `{server}` must be a string"))?;
            check(name, value, server).map_err(|why| format!("${env}: {why}"))?;
            list.push((name.clone(), value.to_string()));
        }
        out.insert(server.trim().to_string(), list);
    }
    Ok(out)
}
