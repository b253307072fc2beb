//! Environment variables for stdio MCP servers (an API key, a token),
//! given by server in the environment variable `AG_MCP_ENV`, a JSON object
//! `{"SPEC": {"NAME": "VALUE", ...}, ...}` keyed by the `--mcp` command line
//! exactly as given, rather than on that command line (`env NAME=VALUE
//! cmd`), where every process of the machine could read them in `ps`.
//! ag-loop withholds the variable from every child, sets each server's own
//! variables on that server alone, and hides the values in its events; an
//! error names a variable, never its value. ag-acp passes an editor's
//! `McpServer::Stdio { env }` this way.

use std::sync::RwLock;

use super::secrets_by_server::{self, ByServer};

/// The variable.
pub const ENV: &str = "AG_MCP_ENV";

/// Variables by server command line.
pub type Vars = ByServer;

/// The variables of this process's servers (see [`register`]).
static REGISTERED: RwLock<Option<Vars>> = RwLock::new(None);

/// The variables in `AG_MCP_ENV` (none when it is unset or empty).
pub fn from_env() -> Result<Vars, String> {
    secrets_by_server::read(ENV)?.map_or_else(|| Ok(Vars::new()), |t| parse(&t))
}

/// Reads and checks the JSON of `AG_MCP_ENV`.
pub fn parse(text: &str) -> Result<Vars, String> {
    secrets_by_server::parse(
        ENV,
        text,
        "a JSON object of MCP server command lines (as given to --mcp), each with an object of variable names and string values: {\"my-server --flag\": {\"API_KEY\": \"...\"}}",
        "variable",
        |name, value, spec| {
            if !is_name(name) {
                return Err(format!(
                    "`{name}` (for `{spec}`) is not an environment variable name (letters, digits and _, not starting with a digit)"
                ));
            }
            if value.contains('\0') {
                return Err(format!(
                    "the value of `{name}` (for `{spec}`) holds a NUL byte"
                ));
            }
            Ok(())
        },
    )
}

/// Whether `name` can be an environment variable's name.
pub fn is_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// From now on, the stdio server started with command line `spec` gets
/// `vars[spec]` in its environment.
pub fn register(vars: Vars) {
    let mut r = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    *r = Some(vars);
}

/// The variables registered for the server `spec`.
pub fn for_command(spec: &str) -> Vec<(String, String)> {
    REGISTERED
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .and_then(|v| v.get(spec.trim()).cloned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn variables_are_read_by_server_and_errors_never_show_a_value() {
        let v = parse(r#"{" srv --x ": {"TOKEN": "s3cret", "B_2": ""}}"#).unwrap();
        assert_eq!(
            v["srv --x"],
            [
                ("TOKEN".to_string(), "s3cret".to_string()),
                ("B_2".to_string(), String::new())
            ]
        );
        for bad in [
            r#"{"srv": {"A B": "s3cret"}}"#,
            r#"{"srv": {"1A": "s3cret"}}"#,
            r#"{"srv": {"A": 5}}"#,
            r#"{"srv": "s3cret"}"#,
            r#"not json s3cret"#,
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(ENV) && !e.contains("s3cret"), "{e}");
        }
        assert!(is_name("_A1") && !is_name("") && !is_name("A-B"));
    }
}
