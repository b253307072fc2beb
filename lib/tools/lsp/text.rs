//! Places in a file's text: the Language Server Protocol counts columns in
//! UTF-16 code units, a person and a model in characters; and a model
//! names a symbol rather than counting columns at all.

/// The UTF-16 offset of character `col` (from 0) of `line`.
pub fn utf16_of(line: &str, col: usize) -> u32 {
    line.chars().take(col).map(char::len_utf16).sum::<usize>() as u32
}

/// The character (from 0) at UTF-16 offset `units` of `line`.
pub fn char_of(line: &str, units: u32) -> u32 {
    let mut seen = 0u32;
    let mut n = 0u32;
    for c in line.chars() {
        if seen >= units {
            break;
        }
        seen += c.len_utf16() as u32;
        n += 1;
    }
    n
}

/// Line `n` (from 0) of `text`, without its line ending.
pub fn line_of(text: &str, n: usize) -> &str {
    text.split('\n')
        .nth(n)
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .unwrap_or("")
}

/// The last part of a dotted or `::` name: what appears in the text.
pub fn simple_name(name: &str) -> &str {
    name.rsplit(['.', ':']).next().unwrap_or(name).trim()
}

/// Where `name` occurs as a whole word in `text`: on line `near` (from 1)
/// when it does, else on the nearest line to it that has it, else (no
/// `near`) its first occurrence. Line and character, both from 0.
pub fn find_name(text: &str, name: &str, near: Option<u32>) -> Option<(u32, u32)> {
    let word = simple_name(name);
    if word.is_empty() {
        return None;
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let in_line = |i: usize| word_at(lines[i], word).map(|c| (i as u32, c));
    match near {
        Some(n) if !lines.is_empty() => {
            let at = (n.max(1) as usize - 1).min(lines.len() - 1);
            for d in 0..lines.len() {
                if let Some(hit) = in_line(at.saturating_sub(d))
                    .filter(|_| d <= at)
                    .or_else(|| (at + d < lines.len()).then(|| in_line(at + d)).flatten())
                {
                    return Some(hit);
                }
            }
            None
        }
        _ => (0..lines.len()).find_map(in_line),
    }
}

/// The first character (from 0) where `word` occurs in `line` as a whole
/// word.
fn word_at(line: &str, word: &str) -> Option<u32> {
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    let mut from = 0;
    while let Some(i) = line[from..].find(word) {
        let start = from + i;
        let end = start + word.len();
        let before = line[..start].chars().next_back();
        let after = line[end..].chars().next();
        if !before.is_some_and(is_word) && !after.is_some_and(is_word) {
            return Some(line[..start].chars().count() as u32);
        }
        from = start + line[start..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_convert_between_characters_and_utf16() {
        let line = "é😀x = 1";
        assert_eq!(utf16_of(line, 2), 3);
        assert_eq!(char_of(line, 3), 2);
        assert_eq!(char_of(line, 0), 0);
        assert_eq!(char_of(line, 99), line.chars().count() as u32);
    }

    #[test]
    fn a_name_is_found_whole_on_or_near_its_line() {
        let text = "class Dog:\n    def speak(self):\n        pass\nclass Cat:\n    def speak(self):\n        speaker = 1\n";
        assert_eq!(find_name(text, "speak", None), Some((1, 8)));
        assert_eq!(find_name(text, "speak", Some(5)), Some((4, 8)));
        assert_eq!(find_name(text, "Cat.speak", Some(4)), Some((4, 8)));
        // Nearest: line 6 has `speaker`, not `speak`; line 5 has it.
        assert_eq!(find_name(text, "speak", Some(6)), Some((4, 8)));
        assert_eq!(find_name(text, "speak", Some(100)), Some((4, 8)));
        assert_eq!(find_name(text, "bark", Some(2)), None);
        assert_eq!(line_of("a\r\nb", 0), "a");
    }
}
