//! The top level of a JSON-RPC line, read without parsing the values of its
//! members: their depth is measured on a stack of its own rather than by
//! recursion, and their bytes are not decoded, so that neither nesting
//! 100,000 levels deep nor bytes that are not UTF-8 hide the request's `id`.

/// One member of the message object: its key and the bytes of its value.
#[derive(Debug)]
pub struct Member<'a> {
    /// The member's name.
    pub key: String,
    /// The bytes of its value, as they came.
    pub value: &'a [u8],
    /// How deep the value's arrays and objects nest (0 for a scalar).
    pub depth: usize,
    /// Whether the value ended; the line may stop or go wrong inside it.
    pub complete: bool,
}

/// The members of a line's top-level object, read without parsing their
/// values, so that neither their depth nor their bytes stop the reading.
/// On a syntax error, the members read before it come with the error.
pub fn scan_object(line: &[u8]) -> (Vec<Member<'_>>, Result<(), String>) {
    let mut members = Vec::new();
    let mut s = Scanner { b: line, at: 0 };
    let result = (|| {
        s.ws();
        s.expect(b'{')?;
        s.ws();
        if s.peek() == Some(b'}') {
            s.at += 1;
        } else {
            loop {
                s.ws();
                let key_start = s.at;
                s.expect(b'"')?;
                s.string_rest()?;
                let key: String = serde_json::from_slice(&line[key_start..s.at])
                    .map_err(|e| format!("a member name is not a JSON string: {e}"))?;
                s.ws();
                s.expect(b':')?;
                s.ws();
                let start = s.at;
                let depth = match s.value() {
                    Ok(depth) => depth,
                    Err(e) => {
                        // The key still tells what kind of message this is.
                        members.push(Member {
                            key,
                            value: &line[start..],
                            depth: 0,
                            complete: false,
                        });
                        return Err(e);
                    }
                };
                members.push(Member {
                    key,
                    value: &line[start..s.at],
                    depth,
                    complete: true,
                });
                s.ws();
                match s.next() {
                    Some(b',') => continue,
                    Some(b'}') => break,
                    _ => return Err(s.error("`,` or `}`")),
                }
            }
        }
        s.ws();
        if s.at < line.len() {
            return Err(format!(
                "text after the message object at byte {}; send one message per line",
                s.at
            ));
        }
        Ok(())
    })();
    (members, result)
}

struct Scanner<'a> {
    b: &'a [u8],
    at: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek();
        self.at += 1;
        c
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.at += 1;
        }
    }

    fn error(&self, wanted: &str) -> String {
        match self.peek() {
            Some(_) => format!("expected {wanted} at byte {}", self.at),
            None => format!("the line ends where {wanted} was expected"),
        }
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(&format!("`{}`", c as char)))
        }
    }

    /// Past the closing quote of a string whose opening quote is read.
    fn string_rest(&mut self) -> Result<(), String> {
        loop {
            match self.next() {
                Some(b'"') => return Ok(()),
                Some(b'\\') => self.at += 1,
                Some(_) => {}
                None => return Err("the line ends inside a string".into()),
            }
        }
    }

    /// Past one value, without recursion: brackets are matched on a stack
    /// of their own. Returns how deep the value nests. Scalars are only
    /// delimited here; the strict parse of the value judges them.
    fn value(&mut self) -> Result<usize, String> {
        let mut open: Vec<u8> = Vec::new();
        let mut deepest = 0;
        loop {
            match self.peek() {
                None => return Err(self.error("a value")),
                Some(b'"') => {
                    self.at += 1;
                    self.string_rest()?;
                }
                Some(c @ (b'[' | b'{')) => {
                    self.at += 1;
                    open.push(if c == b'[' { b']' } else { b'}' });
                    deepest = deepest.max(open.len());
                    continue;
                }
                Some(c @ (b']' | b'}')) => {
                    if open.pop() != Some(c) {
                        return Err(self.error("a value"));
                    }
                    self.at += 1;
                }
                Some(b',' | b':' | b' ' | b'\t' | b'\r' | b'\n') if !open.is_empty() => {
                    self.at += 1;
                    continue;
                }
                Some(_) => {
                    let start = self.at;
                    while let Some(c) = self.peek() {
                        if matches!(
                            c,
                            b',' | b':' | b']' | b'}' | b'"' | b' ' | b'\t' | b'\r' | b'\n'
                        ) {
                            break;
                        }
                        self.at += 1;
                    }
                    if self.at == start {
                        return Err(self.error("a value"));
                    }
                }
            }
            if open.is_empty() {
                return Ok(deepest);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scanner_matches_brackets_and_strings() {
        let (m, r) = scan_object(br#"{"a":[1,{"b":"]}"}],"c":"x\"y","d":-1.5e3}"#);
        assert!(r.is_ok(), "{r:?}");
        let keys: Vec<&str> = m.iter().map(|m| m.key.as_str()).collect();
        assert_eq!(keys, ["a", "c", "d"]);
        assert_eq!(m[0].value, br#"[1,{"b":"]}"}]"#);
        assert_eq!(m[0].depth, 2);
        assert_eq!(m[2].value, b"-1.5e3");
        assert!(scan_object(br#"{"a":[1}"#).1.is_err());
        assert!(scan_object(br#"{"a" 1}"#).1.is_err());
        assert!(scan_object(br#"{"a":1,}"#).1.is_err());
        assert!(scan_object(br#"{}"#).1.is_ok());
    }
}
