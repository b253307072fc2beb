//! Key names as a model writes them (`Enter`, `Control+a`, `ArrowDown`)
//! made into the DevTools protocol's key events.

use serde_json::{Value, json};

/// One key press: the events to send, keyDown then keyUp.
#[derive(Debug, Clone, PartialEq)]
pub struct Press {
    /// `Input.dispatchKeyEvent` params of the key going down.
    pub down: Value,
    /// And coming up.
    pub up: Value,
}

/// Named keys: (name, code, Windows virtual key code, text it types).
const NAMED: &[(&str, &str, i64, &str)] = &[
    ("Enter", "Enter", 13, "\r"),
    ("Tab", "Tab", 9, ""),
    ("Escape", "Escape", 27, ""),
    ("Backspace", "Backspace", 8, ""),
    ("Delete", "Delete", 46, ""),
    ("Space", "Space", 32, " "),
    ("ArrowUp", "ArrowUp", 38, ""),
    ("ArrowDown", "ArrowDown", 40, ""),
    ("ArrowLeft", "ArrowLeft", 37, ""),
    ("ArrowRight", "ArrowRight", 39, ""),
    ("Home", "Home", 36, ""),
    ("End", "End", 35, ""),
    ("PageUp", "PageUp", 33, ""),
    ("PageDown", "PageDown", 34, ""),
    ("Insert", "Insert", 45, ""),
    ("F1", "F1", 112, ""),
    ("F2", "F2", 113, ""),
    ("F3", "F3", 114, ""),
    ("F4", "F4", 115, ""),
    ("F5", "F5", 116, ""),
    ("F6", "F6", 117, ""),
    ("F7", "F7", 118, ""),
    ("F8", "F8", 119, ""),
    ("F9", "F9", 120, ""),
    ("F10", "F10", 121, ""),
    ("F11", "F11", 122, ""),
    ("F12", "F12", 123, ""),
];

/// Other spellings of the named keys.
fn alias(name: &str) -> &str {
    match name.to_ascii_lowercase().as_str() {
        "return" => "Enter",
        "esc" => "Escape",
        "del" => "Delete",
        "up" => "ArrowUp",
        "down" => "ArrowDown",
        "left" => "ArrowLeft",
        "right" => "ArrowRight",
        " " | "spacebar" => "Space",
        _ => name,
    }
}

/// The modifier bits of the protocol: Alt 1, Control 2, Meta 4, Shift 8.
fn modifier(name: &str) -> Option<i64> {
    match name.to_ascii_lowercase().as_str() {
        "alt" | "option" => Some(1),
        "control" | "ctrl" => Some(2),
        "meta" | "cmd" | "command" | "super" => Some(4),
        "shift" => Some(8),
        _ => None,
    }
}

/// The press of `spec` (`Enter`, `a`, `Control+Shift+Tab`), or why it is
/// not a key.
pub fn parse(spec: &str) -> Result<Press, String> {
    let parts: Vec<&str> = if spec == "+" {
        vec!["+"]
    } else {
        spec.split('+').map(str::trim).collect()
    };
    let Some((key, mods)) = parts.split_last() else {
        return Err("the key is empty".into());
    };
    let mut bits = 0;
    for m in mods {
        bits |= modifier(m).ok_or_else(|| {
            format!("`{m}` in `{spec}` is not a modifier (Control, Shift, Alt, Meta)")
        })?;
    }
    let key = alias(key);
    let named = NAMED.iter().find(|(n, ..)| n.eq_ignore_ascii_case(key));
    let (key, code, vk, text) = match named {
        Some((n, code, vk, text)) => (n.to_string(), code.to_string(), *vk, text.to_string()),
        None => {
            let mut chars = key.chars();
            let (Some(c), None) = (chars.next(), chars.next()) else {
                return Err(format!(
                    "`{key}` is not a key: give one character, or a key's name (Enter, Tab, Escape, Backspace, Delete, ArrowUp, ArrowDown, ArrowLeft, ArrowRight, Home, End, PageUp, PageDown, F1-F12), with modifiers as Control+a"
                ));
            };
            let upper = c.to_ascii_uppercase();
            let code = if c.is_ascii_alphabetic() {
                format!("Key{upper}")
            } else if c.is_ascii_digit() {
                format!("Digit{c}")
            } else {
                String::new()
            };
            let vk = if c.is_ascii_alphanumeric() {
                upper as i64
            } else {
                0
            };
            (c.to_string(), code, vk, c.to_string())
        }
    };
    // A key pressed with Control, Alt or Meta types nothing.
    let text = if bits & 7 != 0 { String::new() } else { text };
    let mut down = json!({
        "type": if text.is_empty() { "rawKeyDown" } else { "keyDown" },
        "key": key,
        "code": code,
        "windowsVirtualKeyCode": vk,
        "modifiers": bits,
    });
    if !text.is_empty() {
        down["text"] = json!(text);
        down["unmodifiedText"] = json!(text);
    }
    let up = json!({
        "type": "keyUp",
        "key": key,
        "code": code,
        "windowsVirtualKeyCode": vk,
        "modifiers": bits,
    });
    Ok(Press { down, up })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_characters_and_modifiers() {
        let p = parse("Enter").unwrap();
        assert_eq!(p.down["text"], "\r");
        assert_eq!(p.down["windowsVirtualKeyCode"], 13);
        let p = parse("Control+a").unwrap();
        assert_eq!(p.down["modifiers"], 2);
        assert_eq!(p.down["code"], "KeyA");
        assert!(p.down.get("text").is_none());
        assert_eq!(parse("esc").unwrap().down["key"], "Escape");
        assert_eq!(parse("x").unwrap().down["text"], "x");
        assert!(parse("Hyper+a").is_err());
        assert!(parse("Enterr").is_err());
    }
}
