//! Cutting a response body into frames, whatever sizes its chunks arrive
//! in: Server-Sent Events (`event:`/`data:` lines, `\n`, `\r\n` or `\r`
//! endings, a `\r\n` split across chunks, UTF-8 split anywhere), a JSON
//! array streamed element by element (Gemini without `alt=sse`), or one
//! bare JSON document (an error body sent with status 200). The kind is
//! told from the first byte that is not white space.

/// One event: its SSE `event:` name, if any, and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The `event:` field.
    pub event: Option<String>,
    /// The `data:` lines joined by `\n`, or one JSON document.
    pub data: String,
}

/// Decodes a byte stream into frames, deciding its format from the first byte.
#[derive(Debug, Default)]
pub struct Framer {
    mode: Mode,
    /// Bytes of the current line (SSE) or element (JSON).
    buf: Vec<u8>,
    sse: SseState,
    json: JsonState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Mode {
    #[default]
    Unknown,
    Sse,
    /// A JSON array whose elements are frames.
    JsonArray,
    /// Bare JSON values one after another (one document, or NDJSON).
    JsonValues,
}

#[derive(Debug, Default)]
struct SseState {
    event: Option<String>,
    data: String,
    has_data: bool,
    /// The last chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    bom_checked: bool,
}

#[derive(Debug, Default)]
struct JsonState {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl Framer {
    /// A decoder for a new body.
    pub fn new() -> Framer {
        Framer::default()
    }

    /// Feeds bytes, pushing every completed frame to `out`.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<Frame>) {
        if bytes.is_empty() {
            return;
        }
        if self.mode == Mode::Unknown {
            // Skip a byte-order mark and leading white space to see the format.
            if !self.sse.bom_checked {
                self.buf.extend_from_slice(bytes);
                if self.buf.len() < 3 && b"\xEF\xBB\xBF".starts_with(&self.buf) {
                    return;
                }
                self.sse.bom_checked = true;
                let held = std::mem::take(&mut self.buf);
                let start = if held.starts_with(b"\xEF\xBB\xBF") {
                    3
                } else {
                    0
                };
                return self.feed_owned(&held[start..], out);
            }
            let Some(pos) = bytes.iter().position(|b| !b.is_ascii_whitespace()) else {
                return;
            };
            bytes = &bytes[pos..];
            self.mode = match bytes[0] {
                b'[' => {
                    bytes = &bytes[1..];
                    Mode::JsonArray
                }
                b'{' => Mode::JsonValues,
                _ => Mode::Sse,
            };
        }
        match self.mode {
            Mode::Sse => self.feed_sse(bytes, out),
            Mode::JsonArray | Mode::JsonValues => self.feed_json(bytes, out),
            Mode::Unknown => {}
        }
    }

    fn feed_owned(&mut self, bytes: &[u8], out: &mut Vec<Frame>) {
        self.feed(bytes, out);
    }

    /// The body ended: flushes a last event that had no blank line after it.
    pub fn finish(&mut self, out: &mut Vec<Frame>) {
        match self.mode {
            Mode::Sse => {
                if !self.buf.is_empty() {
                    let line = std::mem::take(&mut self.buf);
                    self.sse_line(&line, out);
                }
                self.dispatch(out);
            }
            Mode::JsonValues | Mode::JsonArray => {
                let rest = String::from_utf8_lossy(&self.buf).trim().to_string();
                self.buf.clear();
                if !rest.is_empty() && rest != "]" {
                    out.push(Frame {
                        event: None,
                        data: rest,
                    });
                }
            }
            Mode::Unknown => {}
        }
    }

    fn feed_sse(&mut self, bytes: &[u8], out: &mut Vec<Frame>) {
        let mut rest = bytes;
        if self.sse.after_cr {
            self.sse.after_cr = false;
            if rest.first() == Some(&b'\n') {
                rest = &rest[1..];
            }
        }
        while let Some(i) = memchr::memchr2(b'\n', b'\r', rest) {
            let (line, tail) = rest.split_at(i);
            let is_cr = tail[0] == b'\r';
            rest = &tail[1..];
            if is_cr {
                match rest.first() {
                    Some(b'\n') => rest = &rest[1..],
                    None => self.sse.after_cr = true,
                    Some(_) => {}
                }
            }
            if self.buf.is_empty() {
                self.sse_line(line, out);
            } else {
                self.buf.extend_from_slice(line);
                let full = std::mem::take(&mut self.buf);
                self.sse_line(&full, out);
            }
        }
        self.buf.extend_from_slice(rest);
    }

    fn sse_line(&mut self, line: &[u8], out: &mut Vec<Frame>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // a comment (keep-alive)
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.sse.has_data {
                    self.sse.data.push('\n');
                }
                // Valid UTF-8 is the rule: its check is several times faster
                // than the lossy conversion, which is kept for the exception.
                match std::str::from_utf8(value) {
                    Ok(text) => self.sse.data.push_str(text),
                    Err(_) => self.sse.data.push_str(&String::from_utf8_lossy(value)),
                }
                self.sse.has_data = true;
            }
            b"event" => self.sse.event = Some(String::from_utf8_lossy(value).into_owned()),
            _ => {} // id, retry and unknown fields carry nothing we use
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Frame>) {
        let event = self.sse.event.take();
        if self.sse.has_data {
            self.sse.has_data = false;
            out.push(Frame {
                event,
                data: std::mem::take(&mut self.sse.data),
            });
        }
    }

    fn feed_json(&mut self, bytes: &[u8], out: &mut Vec<Frame>) {
        let st = &mut self.json;
        let mut start = 0;
        for (i, &b) in bytes.iter().enumerate() {
            if st.in_string {
                if st.escaped {
                    st.escaped = false;
                } else if b == b'\\' {
                    st.escaped = true;
                } else if b == b'"' {
                    st.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => st.in_string = true,
                b'{' | b'[' => {
                    if st.depth == 0 {
                        // Drop separators (`,`, white space) before an element.
                        self.buf.clear();
                        start = i;
                    }
                    st.depth += 1;
                }
                b'}' | b']' if st.depth > 0 => {
                    st.depth -= 1;
                    if st.depth == 0 {
                        self.buf.extend_from_slice(&bytes[start..=i]);
                        start = i + 1;
                        let data = String::from_utf8_lossy(&self.buf).into_owned();
                        self.buf.clear();
                        out.push(Frame { event: None, data });
                    }
                }
                _ => {}
            }
        }
        if st.depth > 0 {
            self.buf.extend_from_slice(&bytes[start..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames_of(chunks: &[&[u8]]) -> Vec<Frame> {
        let mut f = Framer::new();
        let mut out = Vec::new();
        for c in chunks {
            f.feed(c, &mut out);
        }
        f.finish(&mut out);
        out
    }

    fn data(frames: &[Frame]) -> Vec<&str> {
        frames.iter().map(|f| f.data.as_str()).collect()
    }

    #[test]
    fn sse_any_split_gives_the_same_frames() {
        let body = "event: a\r\ndata: {\"x\":\"é€\"}\r\n\r\n: keep-alive\n\ndata: one\ndata:two\n\ndata: last".as_bytes();
        let whole = frames_of(&[body]);
        assert_eq!(data(&whole), vec!["{\"x\":\"é€\"}", "one\ntwo", "last"]);
        assert_eq!(whole[0].event.as_deref(), Some("a"));
        for i in 0..body.len() {
            for j in i..body.len() {
                let split = frames_of(&[&body[..i], &body[i..j], &body[j..]]);
                assert_eq!(split, whole, "split at {i},{j}");
            }
        }
    }

    #[test]
    fn lone_cr_ends_lines() {
        let f = frames_of(&[b"data: a\r\rdata: b\r", b"\r"]);
        assert_eq!(data(&f), vec!["a", "b"]);
    }

    #[test]
    fn json_array_stream() {
        let body = b"[{\"a\": \"x]}\\\"\"}\n,\r\n{\"b\": [1, {\"c\": 2}]}\n]";
        let whole = frames_of(&[body]);
        assert_eq!(
            data(&whole),
            vec!["{\"a\": \"x]}\\\"\"}", "{\"b\": [1, {\"c\": 2}]}"]
        );
        for i in 0..body.len() {
            assert_eq!(frames_of(&[&body[..i], &body[i..]]), whole, "split at {i}");
        }
    }

    #[test]
    fn bare_json_document_and_bom() {
        let f = frames_of(&[b"\xEF\xBB", b"\xBF {\"error\": {\"message\": \"no\"}}"]);
        assert_eq!(data(&f), vec!["{\"error\": {\"message\": \"no\"}}"]);
    }
}
