//! Provider keys as secrets: which environment variables hold them (every
//! `key_env` of the built-in table and of `models.json`), and a redactor
//! that hides their values in text that leaves the process (events,
//! session files, exports, the conversation sent back to the model).
//! ag-loop and ag-mcp withhold these variables from their children; the
//! redactor is the second line, for a key that got out some other way.

use std::borrow::Cow;
use std::sync::{Arc, RwLock};

use serde_json::Value;

use super::models::ModelTable;

/// Values shorter than this are not redacted: a key is long, and hiding
/// every occurrence of a short value (`1`, `test`) would garble output.
pub const MIN_SECRET_LEN: usize = 8;

/// The key variables ag knows about: those of the built-in providers (even
/// where `models.json` replaced a provider's list) and those of `table`.
pub fn key_env_names(table: &ModelTable) -> Vec<String> {
    let builtin = ModelTable::builtin();
    let mut names: Vec<String> = builtin
        .providers()
        .chain(table.providers())
        .flat_map(|p| p.key_env.iter().cloned())
        .filter(|n| !n.is_empty())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The secrets of a process that runs tools: ag-loop and ag-mcp hold
/// them here at start, so that a check before a call sends text off the
/// machine (a `fetch` URL) can look for them; the tool itself is not
/// given the keys, and so cannot.
static HELD: RwLock<Option<Arc<Redactor>>> = RwLock::new(None);

/// Holds `secrets` as this process's (see [`held`]).
pub fn hold(secrets: Arc<Redactor>) {
    *HELD.write().unwrap_or_else(|e| e.into_inner()) = Some(secrets);
}

/// The secrets this process holds: those given to [`hold`], else none.
pub fn held() -> Arc<Redactor> {
    HELD.read()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .unwrap_or_default()
}

/// Hides known secret values in text.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// (value, what replaces it), longest value first so that a key that
    /// contains another is hidden whole.
    secrets: Vec<(String, String)>,
}

impl Redactor {
    /// A redactor for the current values of the key variables of `table`,
    /// the keys written in `models.json` and `extra` (such as `--api-key`,
    /// with the label shown in its place).
    pub fn for_keys(table: &ModelTable, extra: &[(&str, String)]) -> Redactor {
        let mut r = Redactor::default();
        for name in key_env_names(table) {
            if let Ok(value) = std::env::var(&name) {
                r.add(&value, &name);
            }
        }
        for p in table.providers() {
            if let Some(key) = &p.api_key {
                r.add(key, &format!("models.json key of {}", p.id));
            }
        }
        for (label, value) in extra {
            r.add(value, label);
        }
        r
    }

    /// A redactor for the keys this machine holds: the key variables set
    /// here and the keys of `$AG_HOME/models.json` (the built-in table when
    /// that file cannot be read). For tools that handle events they did not
    /// make (`ag-session append`, exports).
    pub fn for_this_machine() -> Redactor {
        let table = ModelTable::load(&super::models::default_ag_home())
            .unwrap_or_else(|_| ModelTable::builtin());
        Redactor::for_keys(&table, &[])
    }

    /// Adds a secret; `label` names it in the replacement (never the value).
    pub fn add(&mut self, value: &str, label: &str) {
        let value = value.trim();
        if value.chars().count() < MIN_SECRET_LEN || self.secrets.iter().any(|(v, _)| v == value) {
            return;
        }
        self.secrets
            .push((value.to_string(), format!("[{label} redacted]")));
        self.secrets
            .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
    }

    /// The name of the first secret (the longest first) that `text` holds,
    /// as its redaction shows it (`OPENAI_API_KEY`).
    pub fn found_in(&self, text: &str) -> Option<&str> {
        self.secrets
            .iter()
            .find(|(value, _)| text.contains(value.as_str()))
            .map(|(_, mark)| {
                mark.strip_prefix('[')
                    .and_then(|m| m.strip_suffix(" redacted]"))
                    .unwrap_or(mark)
            })
    }

    /// True when there is nothing to hide.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The text with every secret replaced.
    pub fn text<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let mut out = Cow::Borrowed(text);
        for (value, mark) in &self.secrets {
            if out.contains(value.as_str()) {
                out = Cow::Owned(out.replace(value.as_str(), mark));
            }
        }
        out
    }

    /// The bytes at the end of `text` that could be the start of a secret
    /// which the next piece of a stream would complete: a streamed text is
    /// held back by this much, so that a key split over two pieces is
    /// still hidden whole. 0 when no secret starts there.
    pub fn unsettled_tail(&self, text: &str) -> usize {
        let mut longest = 0;
        for (value, _) in &self.secrets {
            // Only a proper prefix can be completed later; a whole one was
            // already replaced by `text`.
            let most = value.len().saturating_sub(1).min(text.len());
            for n in (longest + 1..=most).rev() {
                let start = text.len() - n;
                if text.is_char_boundary(start)
                    && value.as_bytes().starts_with(&text.as_bytes()[start..])
                {
                    longest = n;
                    break;
                }
            }
        }
        longest
    }

    /// Redacts in place; true when something was hidden.
    pub fn string(&self, s: &mut String) -> bool {
        match self.text(s) {
            Cow::Owned(t) => {
                *s = t;
                true
            }
            Cow::Borrowed(_) => false,
        }
    }

    /// Redacts every string (and object key) of a JSON value in place.
    pub fn value(&self, v: &mut Value) -> bool {
        if self.is_empty() {
            return false;
        }
        match v {
            Value::String(s) => self.string(s),
            Value::Array(items) => items.iter_mut().fold(false, |hit, x| self.value(x) | hit),
            Value::Object(map) => {
                let mut hit = false;
                if map.keys().any(|k| matches!(self.text(k), Cow::Owned(_))) {
                    let old = std::mem::take(map);
                    for (k, x) in old {
                        map.insert(self.text(&k).into_owned(), x);
                    }
                    hit = true;
                }
                map.values_mut().fold(hit, |hit, x| self.value(x) | hit)
            }
            _ => false,
        }
    }

    /// Redacts one serialised JSON line, where a secret appears in its
    /// escaped form (a key holding `"` or `\`). True when something was
    /// hidden.
    pub fn json_line(&self, line: &mut Vec<u8>) -> bool {
        if self.is_empty() {
            return false;
        }
        let Ok(text) = std::str::from_utf8(line) else {
            return false;
        };
        let mut out = Cow::Borrowed(text);
        for (value, mark) in &self.secrets {
            let escaped = json_inner(value);
            let escaped = escaped.as_str();
            let mark = json_inner(mark);
            let mark = mark.as_str();
            // Inside a JSON line the value only ever appears escaped.
            if !escaped.is_empty() && out.contains(escaped) {
                out = Cow::Owned(out.replace(escaped, mark));
            }
        }
        match out {
            Cow::Owned(t) => {
                *line = t.into_bytes();
                true
            }
            Cow::Borrowed(_) => false,
        }
    }
}

/// A string as it appears between the quotes of a JSON string.
fn json_inner(s: &str) -> String {
    let quoted = serde_json::to_string(s).unwrap_or_default();
    quoted
        .strip_prefix('"')
        .and_then(|q| q.strip_suffix('"'))
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_builtin_names_are_known() {
        let names = key_env_names(&ModelTable::builtin());
        for n in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
            assert!(names.iter().any(|x| x == n), "{names:?}");
        }
    }

    #[test]
    fn hides_values_in_text_json_and_escaped_lines() {
        let mut r = Redactor::default();
        r.add("sk-abc123456789", "OPENAI_API_KEY");
        r.add("short", "X");
        r.add("we\"ird\\key-123\"", "ODD");
        assert_eq!(
            r.text("key=sk-abc123456789 short"),
            "key=[OPENAI_API_KEY redacted] short"
        );
        let mut v = json!({"out": ["a sk-abc123456789 b"], "sk-abc123456789": 1});
        assert!(r.value(&mut v));
        assert!(!v.to_string().contains("sk-abc"), "{v}");
        let mut line = serde_json::to_vec(&json!({"x": "we\"ird\\key-123\"!"})).unwrap();
        assert!(r.json_line(&mut line));
        let back: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(back["x"], "[ODD redacted]!");
    }

    #[test]
    fn a_secret_is_found_by_its_name() {
        let mut r = Redactor::default();
        r.add("sk-abc123456789", "OPENAI_API_KEY");
        assert_eq!(
            r.found_in("https://x/?k=sk-abc123456789"),
            Some("OPENAI_API_KEY")
        );
        assert_eq!(r.found_in("https://x/?k=sk-abc"), None);
    }

    #[test]
    fn a_longer_key_is_hidden_whole() {
        let mut r = Redactor::default();
        r.add("abcdefgh", "A");
        r.add("abcdefgh-ijklmnop", "B");
        assert_eq!(r.text("abcdefgh-ijklmnop"), "[B redacted]");
    }

    #[test]
    fn a_tail_that_could_begin_a_key_is_unsettled() {
        let mut r = Redactor::default();
        r.add("sk-secret-12345", "KEY");
        assert_eq!(r.unsettled_tail("the key is sk-sec"), "sk-sec".len());
        assert_eq!(r.unsettled_tail("the key is s"), 1);
        assert_eq!(r.unsettled_tail("nothing here"), 0);
        // A whole key is no tail (`text` replaces it), nor is a tail that
        // only ends like one.
        assert_eq!(r.unsettled_tail("sk-secret-12345"), 0);
        assert_eq!(r.unsettled_tail("key: 12345"), 0);
        assert_eq!(r.unsettled_tail("é"), 0);
    }
}
