//! A skim of PDF syntax before lopdf parses anything, and the checks that
//! keep lopdf's work bounded by the size of the file.
//!
//! lopdf caps how far one stream may inflate, but not what it builds from
//! what it reads: about 120 bytes of memory for each value it parses (a
//! 2 MB array of zeros became 124 MiB), an object stream whose index names
//! one offset many times is parsed once per name (a 1 KB file reached
//! 2.3 GiB), and it decodes an object stream whenever a stream's `/Length`
//! points into one, outside any hook a caller has. So every object stream
//! in the file is inflated here first, with lopdf's own capped decoder, and
//! its index checked: its objects must follow each other without overlap,
//! so that parsing them all costs no more than reading the stream once.
//! The values outside streams are counted, and cross-reference streams'
//! entries too. Names that only an object stream or a cross-reference
//! stream uses (`/First`, `/XRef`), and `/Encrypt`, hidden where the skim does not read
//! (inside another stream's data, a string or a comment, where a forged
//! cross-reference offset could still lead lopdf) refuse the file.
//!
//! The lexer follows PDF's syntax (ISO 32000-1, 7.2 and 7.3) only as far as
//! it needs to tell values apart, and counts conservatively: where it and
//! lopdf could disagree, it counts more.

use memchr::memmem;

use super::limits::{MAX_INFLATED, MAX_OBJECTS, MAX_STREAM, MAX_VALUES, MAX_XREF_ENTRIES, Refusal};

/// Names the skim must see wherever lopdf could read them: a stream with a
/// `/First` is decoded as an object stream by lopdf whatever its type, and
/// an `/XRef` stream's entries are all loaded, and an encrypted file is
/// loaded in a way that takes no guard.
const WATCHED: &[&[u8]] = &[b"First", b"XRef", b"Encrypt"];

/// How deep a dictionary's values are kept for the checks (a filter's
/// parameters are two levels down); deeper ones are counted and skipped.
const KEEP_DEPTH: usize = 4;

/// Elements of one array kept for the checks (an `/Index`, a filter chain);
/// a longer one is counted but not kept.
const KEEP_ITEMS: usize = 4096;

fn is_space(b: u8) -> bool {
    matches!(b, 0 | b'\t' | b'\n' | 0x0c | b'\r' | b' ')
}

fn is_delimiter(b: u8) -> bool {
    matches!(
        b,
        b'(' | b')' | b'<' | b'>' | b'[' | b']' | b'{' | b'}' | b'/' | b'%'
    )
}

fn is_regular(b: u8) -> bool {
    !is_space(b) && !is_delimiter(b)
}

/// One token of PDF syntax.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Tok<'a> {
    /// An integer.
    Int(i64),
    /// A real number.
    Real,
    /// A name, its raw bytes after the `/` (`#xx` escapes not decoded).
    Name(&'a [u8]),
    /// A literal or hexadecimal string.
    Str,
    /// A keyword or an operator (`obj`, `stream`, `R`, `Tj`, ...).
    Word(&'a [u8]),
    /// `<<`.
    DictOpen,
    /// `>>`.
    DictClose,
    /// `[`.
    ArrayOpen,
    /// `]`.
    ArrayClose,
    /// Anything else (`{`, `}`, a stray `)` or `>`).
    Other,
}

/// Reads tokens one by one. With `watch`, strings and comments are looked
/// into for the [`WATCHED`] names.
pub(super) struct Lexer<'a> {
    buf: &'a [u8],
    pub(super) pos: usize,
    /// Where the last token started.
    pub(super) start: usize,
    watch: bool,
    /// A watched name was seen inside a string or a comment.
    pub(super) hidden: bool,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(buf: &'a [u8], watch: bool) -> Self {
        Lexer {
            buf,
            pos: 0,
            start: 0,
            watch,
            hidden: false,
        }
    }

    fn peek_byte(&self, at: usize) -> Option<u8> {
        self.buf.get(at).copied()
    }

    fn look_into(&mut self, start: usize, end: usize) {
        if self.watch && !self.hidden {
            self.hidden = has_watched_name(&self.buf[start..end.min(self.buf.len())]);
        }
    }

    /// The next token, or `None` at the end.
    pub(super) fn next_tok(&mut self) -> Option<Tok<'a>> {
        loop {
            let b = self.peek_byte(self.pos)?;
            if is_space(b) {
                self.pos += 1;
                continue;
            }
            if b == b'%' {
                let start = self.pos;
                let rest = &self.buf[self.pos..];
                let len = memchr::memchr2(b'\r', b'\n', rest).unwrap_or(rest.len());
                self.pos += len;
                self.look_into(start, self.pos);
                continue;
            }
            break;
        }
        let start = self.pos;
        self.start = start;
        let b = self.buf[start];
        let tok = match b {
            b'(' => {
                self.skip_literal_string();
                self.look_into(start, self.pos);
                Tok::Str
            }
            b'<' if self.peek_byte(start + 1) == Some(b'<') => {
                self.pos += 2;
                Tok::DictOpen
            }
            b'<' => {
                let rest = &self.buf[start..];
                self.pos += memchr::memchr(b'>', rest).map_or(rest.len(), |i| i + 1);
                Tok::Str
            }
            b'>' if self.peek_byte(start + 1) == Some(b'>') => {
                self.pos += 2;
                Tok::DictClose
            }
            b'[' => {
                self.pos += 1;
                Tok::ArrayOpen
            }
            b']' => {
                self.pos += 1;
                Tok::ArrayClose
            }
            b'/' => {
                self.pos += 1;
                let from = self.pos;
                self.skip_regular();
                Tok::Name(&self.buf[from..self.pos])
            }
            _ if is_regular(b) => {
                self.skip_regular();
                classify(&self.buf[start..self.pos])
            }
            _ => {
                self.pos += 1;
                Tok::Other
            }
        };
        Some(tok)
    }

    fn skip_regular(&mut self) {
        while self.peek_byte(self.pos).is_some_and(is_regular) {
            self.pos += 1;
        }
    }

    /// From a `(` to its matching `)`, over escapes and nested pairs.
    fn skip_literal_string(&mut self) {
        let mut depth = 0usize;
        while let Some(b) = self.peek_byte(self.pos) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
        }
        self.pos = self.pos.min(self.buf.len());
    }

    /// Skips one value that starts with `first` (already read), counting
    /// its tokens into `count`, without keeping it: arrays and dictionaries
    /// are matched by depth, not by recursion, so nesting costs no stack.
    fn skip_value(&mut self, first: Tok<'a>, count: &mut usize) {
        *count += 1;
        let mut depth: usize = match first {
            Tok::DictOpen | Tok::ArrayOpen => 1,
            _ => return,
        };
        while depth > 0 {
            let Some(t) = self.next_tok() else {
                return;
            };
            match t {
                Tok::DictOpen | Tok::ArrayOpen => {
                    depth += 1;
                    *count += 1;
                }
                Tok::DictClose | Tok::ArrayClose => depth -= 1,
                _ => *count += 1,
            }
        }
    }
}

fn classify(word: &[u8]) -> Tok<'_> {
    let digits = word.strip_prefix(b"+").or_else(|| word.strip_prefix(b"-"));
    let body = digits.unwrap_or(word);
    if !body.is_empty() && body.iter().all(u8::is_ascii_digit) {
        return std::str::from_utf8(word)
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(Tok::Real, Tok::Int);
    }
    let dots = body.iter().filter(|b| **b == b'.').count();
    if dots == 1 && body.len() > 1 && body.iter().all(|b| b.is_ascii_digit() || *b == b'.') {
        return Tok::Real;
    }
    Tok::Word(word)
}

/// Whether the raw name (as after the `/`, `#xx` escapes and all) is
/// `want`, as lopdf decodes names.
pub(super) fn name_is(raw: &[u8], want: &[u8]) -> bool {
    let mut i = 0;
    let mut w = want.iter();
    while i < raw.len() {
        let mut b = raw[i];
        i += 1;
        if b == b'#'
            && let Some(h) = raw.get(i..i + 2)
            && let Ok(s) = std::str::from_utf8(h)
            && let Ok(v) = u8::from_str_radix(s, 16)
        {
            b = v;
            i += 2;
        }
        if w.next() != Some(&b) {
            return false;
        }
    }
    w.next().is_none()
}

/// Whether `bytes` hold a [`WATCHED`] name anywhere.
fn has_watched_name(bytes: &[u8]) -> bool {
    memchr::memchr_iter(b'/', bytes).any(|at| {
        let rest = &bytes[at + 1..];
        let len = rest
            .iter()
            .position(|b| !is_regular(*b))
            .unwrap_or(rest.len());
        WATCHED.iter().any(|w| name_is(&rest[..len], w))
    })
}

/// A value kept for the checks: what a stream's dictionary says about it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Int(i64),
    Name(Vec<u8>),
    Array(Vec<Value>),
    Dict(Vec<(Vec<u8>, Value)>),
    /// Anything else: a string, a real, a reference, a value too deep.
    Other,
}

impl Value {
    fn get(&self, key: &[u8]) -> Option<&Value> {
        match self {
            Value::Dict(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The value as lopdf's object, for its decoder: only the names,
    /// integers, arrays and dictionaries a filter chain and its parameters
    /// are made of; anything else is left out, as lopdf's decoder leaves out
    /// what it cannot use (it does not follow references there either).
    fn to_lopdf(&self) -> Option<lopdf::Object> {
        Some(match self {
            Value::Int(i) => lopdf::Object::Integer(*i),
            Value::Name(n) => lopdf::Object::Name(n.clone()),
            Value::Array(items) => {
                lopdf::Object::Array(items.iter().filter_map(Value::to_lopdf).collect())
            }
            Value::Dict(entries) => {
                let mut d = lopdf::Dictionary::new();
                for (k, v) in entries {
                    if let Some(v) = v.to_lopdf() {
                        d.set(k.clone(), v);
                    }
                }
                lopdf::Object::Dictionary(d)
            }
            Value::Other => return None,
        })
    }
}

/// Decodes a raw name's `#xx` escapes; `None` for a name too long to be
/// one the checks look for.
fn decode_name(raw: &[u8]) -> Option<Vec<u8>> {
    if raw.len() > 64 {
        return None;
    }
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        i += 1;
        if b == b'#'
            && let Some(h) = raw.get(i..i + 2)
            && let Ok(s) = std::str::from_utf8(h)
            && let Ok(v) = u8::from_str_radix(s, 16)
        {
            out.push(v);
            i += 2;
        } else {
            out.push(b);
        }
    }
    Some(out)
}

/// What the whole file holds, as far as the limits are concerned.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Tally {
    /// Values outside streams, and in object streams.
    pub values: usize,
    /// Objects in object streams.
    pub packed_objects: usize,
    /// Bytes the object streams inflate to, all together.
    pub inflated: usize,
    /// Entries the cross-reference streams declare.
    pub xref_entries: usize,
}

/// Skims a whole PDF file and refuses what lopdf could not read within the
/// limits: too many values, an object stream that inflates too far or
/// whose objects overlap, too many cross-reference entries, an encrypted
/// file, a watched name hidden from the skim.
pub(super) fn check_file(bytes: &[u8]) -> Result<Tally, Refusal> {
    let mut tally = Tally::default();
    let mut lx = Lexer::new(bytes, true);
    let endstream = memmem::Finder::new(b"endstream");
    while let Some(t) = lx.next_tok() {
        let dict = match t {
            Tok::DictOpen => Some(keep_dict(&mut lx, 1, &mut tally.values)),
            Tok::ArrayOpen => {
                lx.skip_value(t, &mut tally.values);
                None
            }
            _ => {
                tally.values += 1;
                None
            }
        };
        if tally.values > MAX_VALUES {
            return Err(Refusal::Values);
        }
        if lx.hidden {
            return Err(Refusal::Hidden);
        }
        let Some(dict) = dict else {
            continue;
        };
        // A trailer's, or a cross-reference stream's: lopdf would load the
        // file its own way, without the guard, to decrypt it.
        if dict.get(b"Encrypt").is_some() {
            return Err(Refusal::Encrypted);
        }
        if let Some(Value::Name(t)) = dict.get(b"Type")
            && t == b"XRef"
        {
            tally.xref_entries = tally.xref_entries.saturating_add(xref_entries(&dict));
            if tally.xref_entries > MAX_XREF_ENTRIES {
                return Err(Refusal::XrefEntries);
            }
        }
        // A dictionary followed by `stream` is a stream's: find its data.
        let save = lx.pos;
        if lx.next_tok() != Some(Tok::Word(b"stream")) {
            lx.pos = save;
            continue;
        }
        let start = data_start(bytes, lx.pos);
        let end = data_end(
            bytes,
            start,
            dict.get(b"Length").and_then(Value::int),
            &endstream,
        );
        let data = &bytes[start..end];
        lx.pos = end;
        match dict.get(b"First").and_then(Value::int) {
            // lopdf reads any stream with a `/First` as an object stream.
            Some(first) => object_stream(&dict, data, first, &mut tally)?,
            None if has_watched_name(data) => return Err(Refusal::Hidden),
            None => {}
        }
    }
    Ok(tally)
}

/// Reads a dictionary after its `<<`, keeping the values the checks use
/// (all of them down to [`KEEP_DEPTH`]) and counting every token.
fn keep_dict(lx: &mut Lexer<'_>, depth: usize, count: &mut usize) -> Value {
    *count += 1;
    let mut entries = Vec::new();
    while let Some(t) = lx.next_tok() {
        let key = match t {
            Tok::DictClose => break,
            Tok::Name(raw) => {
                *count += 1;
                raw
            }
            // Not a key: counted and passed over, as a lenient parser would.
            other => {
                lx.skip_value(other, count);
                continue;
            }
        };
        let Some(t) = lx.next_tok() else {
            break;
        };
        if t == Tok::DictClose {
            break;
        }
        let value = keep_value(lx, t, depth, count);
        if let Some(k) = decode_name(key)
            && entries.len() < KEEP_ITEMS
        {
            entries.push((k, value));
        }
    }
    Value::Dict(entries)
}

fn keep_value<'a>(lx: &mut Lexer<'a>, t: Tok<'a>, depth: usize, count: &mut usize) -> Value {
    match t {
        Tok::DictOpen if depth < KEEP_DEPTH => keep_dict(lx, depth + 1, count),
        Tok::ArrayOpen if depth < KEEP_DEPTH => {
            *count += 1;
            let mut items = Vec::new();
            while let Some(t) = lx.next_tok() {
                if t == Tok::ArrayClose {
                    break;
                }
                let v = keep_value(lx, t, depth + 1, count);
                if items.len() < KEEP_ITEMS {
                    items.push(v);
                }
            }
            Value::Array(items)
        }
        Tok::Int(i) => {
            *count += 1;
            Value::Int(i)
        }
        Tok::Name(raw) => {
            *count += 1;
            decode_name(raw).map_or(Value::Other, Value::Name)
        }
        other => {
            lx.skip_value(other, count);
            Value::Other
        }
    }
}

/// Where a stream's data starts: after `stream` and its end of line.
fn data_start(bytes: &[u8], after_keyword: usize) -> usize {
    let rest = &bytes[after_keyword..];
    let eol = if rest.starts_with(b"\r\n") {
        2
    } else if rest.starts_with(b"\n") || rest.starts_with(b"\r") {
        1
    } else {
        0
    };
    after_keyword + eol
}

/// Where a stream's data ends: at its `/Length` when `endstream` follows
/// there, else before the next `endstream`.
fn data_end(bytes: &[u8], start: usize, length: Option<i64>, endstream: &memmem::Finder) -> usize {
    if let Some(len) = length.and_then(|l| usize::try_from(l).ok())
        && let Some(end) = start.checked_add(len).filter(|e| *e <= bytes.len())
    {
        let after = &bytes[end..];
        let ws = after.iter().take_while(|b| is_space(**b)).count();
        if after[ws..].starts_with(b"endstream") {
            return end;
        }
    }
    match endstream.find(&bytes[start..]) {
        Some(at) => {
            let mut end = start + at;
            if bytes[..end].ends_with(b"\r\n") {
                end -= 2;
            } else if bytes[..end].ends_with(b"\n") || bytes[..end].ends_with(b"\r") {
                end -= 1;
            }
            end.max(start)
        }
        None => bytes.len(),
    }
}

/// The entries a cross-reference stream's dictionary declares: the counts
/// of its `/Index`, else its `/Size`.
fn xref_entries(dict: &Value) -> usize {
    let count = |v: &Value| v.int().and_then(|i| usize::try_from(i).ok()).unwrap_or(0);
    match dict.get(b"Index") {
        Some(Value::Array(items)) => items
            .chunks(2)
            .filter_map(|c| c.get(1))
            .map(count)
            .fold(0usize, usize::saturating_add),
        _ => dict.get(b"Size").map_or(0, count),
    }
}

/// Inflates an object stream (any stream with a `/First`) as lopdf would,
/// within [`MAX_STREAM`], and checks its index: the objects it names must
/// start at increasing offsets, each after the end of the one before, so
/// that lopdf parses each byte once.
fn object_stream(dict: &Value, data: &[u8], first: i64, tally: &mut Tally) -> Result<(), Refusal> {
    let mut d = lopdf::Dictionary::new();
    for key in [&b"Filter"[..], b"DecodeParms"] {
        if let Some(v) = dict.get(key).and_then(Value::to_lopdf) {
            d.set(key.to_vec(), v);
        }
    }
    let stream = lopdf::Stream::new(d, data.to_vec());
    let content = match stream.get_plain_content_with_limit(MAX_STREAM) {
        Ok(c) => c,
        Err(lopdf::Error::Decompress(lopdf::DecompressError::MemoryLimitExceeded { .. })) => {
            return Err(Refusal::StreamSize);
        }
        // lopdf cannot decode it either, and then reads none of its objects.
        Err(_) => return Ok(()),
    };
    drop(stream);
    tally.inflated = tally.inflated.saturating_add(content.len());
    if tally.inflated > MAX_INFLATED {
        return Err(Refusal::Inflated);
    }
    let Ok(first) = usize::try_from(first) else {
        return Ok(());
    };
    let Some(index) = content.get(..first) else {
        // lopdf refuses an index past the end the same way.
        return Ok(());
    };
    // The numbers as lopdf reads them: white space and `%` comments apart,
    // pairs of object number and offset, a pair with a bad number skipped.
    let Ok(index) = std::str::from_utf8(index) else {
        return Ok(());
    };
    let numbers: Vec<Option<u32>> = index
        .split(['\r', '\n'])
        .flat_map(|line| {
            line.split('%')
                .next()
                .unwrap_or_default()
                .split_whitespace()
        })
        .map(|n| n.parse().ok())
        .collect();
    tally.values = tally.values.saturating_add(numbers.len());
    let mut offsets = Vec::new();
    for pair in numbers.chunks_exact(2) {
        if let (Some(_), Some(offset)) = (pair[0], pair[1]) {
            offsets.push(first.saturating_add(offset as usize));
        }
    }
    tally.packed_objects += offsets.len();
    if tally.packed_objects > MAX_OBJECTS {
        return Err(Refusal::Objects);
    }
    let mut done = first;
    for at in offsets {
        if at < done {
            return Err(Refusal::Overlap);
        }
        if at >= content.len() {
            // lopdf skips an offset past the end.
            continue;
        }
        let mut lx = Lexer::new(&content, false);
        lx.pos = at;
        let Some(t) = lx.next_tok() else {
            continue;
        };
        // An object stream holds no streams (and no `obj`): one that does
        // is made to be read some other way than it looks.
        if matches!(t, Tok::Word(w) if w == b"stream" || w == b"obj" || w == b"endstream") {
            return Err(Refusal::Overlap);
        }
        lx.skip_value(t, &mut tally.values);
        // `5 0 R` is one value to lopdf: its `0 R` follow.
        let save = lx.pos;
        let reference = matches!(t, Tok::Int(_))
            && matches!(lx.next_tok(), Some(Tok::Int(_)))
            && lx.next_tok() == Some(Tok::Word(b"R"));
        if !reference {
            lx.pos = save;
        }
        done = lx.pos;
        if tally.values > MAX_VALUES {
            return Err(Refusal::Values);
        }
    }
    Ok(())
}

/// The most operands one operator of a page's content takes, counting the
/// values inside its arrays: lopdf builds them all before the operator is
/// seen. An inline image's data (`ID` ... `EI`) is one value.
pub(super) fn largest_operation(content: &[u8]) -> usize {
    let mut lx = Lexer::new(content, false);
    let ei = memmem::Finder::new(b"EI");
    let (mut run, mut most) = (0usize, 0usize);
    while let Some(t) = lx.next_tok() {
        match t {
            Tok::DictOpen | Tok::ArrayOpen => lx.skip_value(t, &mut run),
            Tok::Word(w) if w == b"true" || w == b"false" || w == b"null" => run += 1,
            Tok::Word(w) => {
                if w == b"ID" {
                    // The data runs to an `EI` with white space before it.
                    let mut from = lx.pos;
                    loop {
                        match ei.find(&content[from..]) {
                            Some(at)
                                if at > 0
                                    && is_space(content[from + at - 1])
                                    && content
                                        .get(from + at + 2)
                                        .is_none_or(|b| !is_regular(*b)) =>
                            {
                                lx.pos = from + at + 2;
                                break;
                            }
                            Some(at) => from += at + 2,
                            None => {
                                lx.pos = content.len();
                                break;
                            }
                        }
                    }
                }
                most = most.max(run);
                run = 0;
            }
            _ => run += 1,
        }
    }
    most.max(run)
}

/// The character codes a ToUnicode CMap maps: each `bfrange`'s span and
/// each `bfchar`. lopdf builds a reverse map with an entry per code, so a
/// range of four-byte codes in a few bytes would build billions.
pub(super) fn cmap_codes(cmap: &[u8]) -> u64 {
    let mut lx = Lexer::new(cmap, false);
    let mut codes = 0u64;
    let (mut in_range, mut in_char) = (false, false);
    // In a `bfrange`: the low code, then the high one, then the target.
    let mut low: Option<u64> = None;
    let mut high: Option<u64> = None;
    while let Some(t) = lx.next_tok() {
        match t {
            Tok::Word(w) => {
                in_range = w == b"beginbfrange";
                in_char = w == b"beginbfchar";
                low = None;
                high = None;
            }
            Tok::Str if in_range || in_char => {
                let code = hex_code(&cmap[lx.start..lx.pos]);
                if in_char {
                    // Source and target alternate; count the sources.
                    low = match low {
                        None => {
                            codes += 1;
                            Some(0)
                        }
                        Some(_) => None,
                    };
                } else if low.is_none() {
                    low = Some(code.unwrap_or(0));
                } else if high.is_none() {
                    high = Some(code.unwrap_or(0));
                } else {
                    codes += span(low, high);
                    (low, high) = (None, None);
                }
            }
            Tok::ArrayOpen if in_range && high.is_some() => {
                let mut n = 0;
                lx.skip_value(t, &mut n);
                codes += span(low, high);
                (low, high) = (None, None);
            }
            _ => {}
        }
    }
    codes
}

fn span(low: Option<u64>, high: Option<u64>) -> u64 {
    match (low, high) {
        (Some(l), Some(h)) if h >= l => h - l + 1,
        _ => 0,
    }
}

/// The value of a hex string token `<...>` of at most eight digits.
fn hex_code(token: &[u8]) -> Option<u64> {
    let inner = token.strip_prefix(b"<")?.strip_suffix(b">")?;
    let digits: Vec<u8> = inner.iter().copied().filter(|b| !is_space(*b)).collect();
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(&digits).ok()?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &[u8]) -> Vec<Tok<'_>> {
        let mut lx = Lexer::new(s, false);
        std::iter::from_fn(|| lx.next_tok()).collect()
    }

    #[test]
    fn tokens_of_each_kind() {
        assert_eq!(
            toks(b"1 0 obj << /Ty#70e /Page /N -3 /R 2.5 /S (a (b) \\) c) /H <41 42> >> [true] endobj % note\n"),
            vec![
                Tok::Int(1),
                Tok::Int(0),
                Tok::Word(b"obj"),
                Tok::DictOpen,
                Tok::Name(b"Ty#70e"),
                Tok::Name(b"Page"),
                Tok::Name(b"N"),
                Tok::Int(-3),
                Tok::Name(b"R"),
                Tok::Real,
                Tok::Name(b"S"),
                Tok::Str,
                Tok::Name(b"H"),
                Tok::Str,
                Tok::DictClose,
                Tok::ArrayOpen,
                Tok::Word(b"true"),
                Tok::ArrayClose,
                Tok::Word(b"endobj"),
            ]
        );
        assert!(name_is(b"Ty#70e", b"Type"));
        assert!(!name_is(b"Typ", b"Type"));
        assert!(!name_is(b"FirstChar", b"First"));
    }

    #[test]
    fn nesting_costs_no_stack() {
        // Far deeper than a recursive reader could follow.
        let deep = format!("{}0{}", "[".repeat(1_000_000), "]".repeat(1_000_000));
        let mut lx = Lexer::new(deep.as_bytes(), false);
        let first = lx.next_tok().unwrap();
        let mut n = 0;
        lx.skip_value(first, &mut n);
        assert_eq!(n, 1_000_001);
        assert_eq!(lx.pos, deep.len());
    }

    #[test]
    fn operands_are_counted_per_operator_and_inline_images_are_one() {
        assert_eq!(
            largest_operation(b"BT /F1 12 Tf (a) Tj [(b) 3 (c)] TJ ET"),
            4
        );
        let image = b"BI /W 4 /H 4 ID \x00\x01( [ EIx \nEI Q";
        assert_eq!(largest_operation(image), 4);
        assert_eq!(largest_operation(b"0 0 0 0"), 4);
    }

    #[test]
    fn cmap_codes_count_ranges_and_chars() {
        let cmap = b"2 beginbfrange\n<0000> <00ff> <0041>\n<0100> <0101> [<0042> <0043>]\nendbfrange\n2 beginbfchar\n<01> <0044>\n<02> <0045>\nendbfchar";
        assert_eq!(cmap_codes(cmap), 256 + 2 + 2);
        assert_eq!(
            cmap_codes(b"1 beginbfrange <00000000> <ffffffff> <0041> endbfrange"),
            1 << 32
        );
    }

    #[test]
    fn a_plain_file_is_tallied_and_an_encrypted_one_refused() {
        let two = include_bytes!("../../tests/fixtures/attach/two-pages.pdf");
        let t = check_file(two).unwrap();
        assert!(t.values > 50 && t.values < 200, "{t:?}");
        assert_eq!(t.packed_objects, 0);
        let enc = b"%PDF-1.4\ntrailer << /Root 1 0 R /Encr#79pt 5 0 R >>";
        assert_eq!(check_file(enc), Err(Refusal::Encrypted));
    }

    #[test]
    fn a_watched_name_where_the_skim_does_not_read_refuses() {
        let s = b"%PDF-1.4\n1 0 obj << /Length 30 >>\nstream\n9 0 obj << /First 4 /N 1 >>\nendstream\nendobj\n";
        assert_eq!(check_file(s), Err(Refusal::Hidden));
        let in_string = b"%PDF-1.4\n1 0 obj (x 9 0 obj << /XRef >>) endobj";
        assert_eq!(check_file(in_string), Err(Refusal::Hidden));
        // In the open, /First is an ordinary key (outlines have it).
        let open = b"%PDF-1.4\n1 0 obj << /First 2 0 R /Count 1 >> endobj";
        assert!(check_file(open).is_ok());
    }

    fn object_stream_file(index: &str, objects: &str) -> Vec<u8> {
        let content = format!("{index}{objects}");
        let mut out = format!(
            "%PDF-1.5\n1 0 obj << /Type /ObjStm /N 2 /First {} /Length {} >>\nstream\n",
            index.len(),
            content.len()
        )
        .into_bytes();
        out.extend(content.as_bytes());
        out.extend(b"\nendstream\nendobj\n");
        out
    }

    #[test]
    fn an_object_streams_objects_must_not_overlap() {
        let ok = object_stream_file("5 0 6 4 ", "[1] [2 3]");
        let t = check_file(&ok).unwrap();
        assert_eq!(t.packed_objects, 2);
        // Two names for one offset: lopdf would parse it twice.
        let twice = object_stream_file("5 0 6 0 ", "[1 2 3]");
        assert_eq!(check_file(&twice), Err(Refusal::Overlap));
        // An offset inside the object before it.
        let inside = object_stream_file("5 0 6 1 ", "[[1 2 3]]");
        assert_eq!(check_file(&inside), Err(Refusal::Overlap));
    }

    #[test]
    fn cross_reference_streams_declare_their_entries() {
        let x = b"%PDF-1.5\n1 0 obj << /Type /XRef /Size 100 /Index [0 10 50 20] /W [1 2 1] >>\nstream\n\nendstream\nendobj";
        assert_eq!(check_file(x).unwrap().xref_entries, 30);
        let big = format!(
            "%PDF-1.5\n1 0 obj << /Type /XRef /Size {} /W [1 2 1] >>\nstream\n\nendstream\nendobj",
            MAX_XREF_ENTRIES + 1
        );
        assert_eq!(check_file(big.as_bytes()), Err(Refusal::XrefEntries));
    }
}
