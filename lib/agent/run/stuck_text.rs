//! A model stuck in a loop: a small model sometimes writes the same
//! stretch of text again and again (a claim and its code fence, one line
//! of a file) until its output limit, which on a local server can take
//! many minutes and ends with nothing more than the first copy said. The
//! stream is watched as it comes; once its end is one block repeated many
//! times over, the call is stopped there and the text kept up to the
//! second copy, as if the output limit had been reached.
//!
//! Only a long run of exact copies counts: a table or a list repeats its
//! shape, not its characters. A tool call's arguments are watched too,
//! with longer blocks ([`Watcher::arguments`]): a small model that loops
//! inside a call (one patch hunk, twenty times) never closes it, and
//! nothing of it can run. A file's content may repeat on purpose, so the
//! runner stops a looping call once a prompt at most (see `runner.rs`).
//!
//! The other way a model gets stuck is blank: after its answer, a newline a
//! token, hundreds of them, at a token a second on a busy local server.
//! That is too short a block to be found as a loop before many minutes
//! pass, so a run of whitespace is counted as it comes: 32 blank lines, or
//! 512 bytes of nothing but whitespace, is no answer's formatting.

/// The bytes at the end matched against earlier text to find a block's
/// length (a shorter block repeated is found as a multiple of itself).
const MIN_BLOCK: usize = 16;
/// The longest block looked for.
const MAX_BLOCK: usize = 2048;

/// How long and how often a block must repeat to be a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// The shortest block.
    pub min_block: usize,
    /// Copies in a row.
    pub min_copies: usize,
    /// And the bytes they must span together, so that a few copies of a
    /// short line are not enough.
    pub min_span: usize,
    /// Whether a block that is a shorter one repeated counts: for text,
    /// `ok` a thousand times is a loop; in a file's content, a run of one
    /// character or of blank lines may be what the file holds.
    pub short_periods: bool,
}

/// For text: eight copies over 1,500 bytes.
pub const TEXT: Bounds = Bounds {
    min_block: MIN_BLOCK,
    min_copies: 8,
    min_span: 1500,
    short_periods: true,
};

/// For a call's arguments: whole lines or hunks, not a run of one
/// character, but fewer copies, as a call that loops is already lost and
/// each copy costs the time of its tokens.
pub const ARGUMENTS: Bounds = Bounds {
    min_block: 48,
    min_copies: 5,
    min_span: 800,
    short_periods: false,
};
/// New characters between two looks, to keep the cost per delta small.
const LOOK_EVERY: usize = 256;
/// Newlines in one run of whitespace that make it stuck.
const MAX_BLANK_LINES: usize = 32;
/// Bytes of one run of whitespace that make it stuck.
const MAX_BLANK_BYTES: usize = 512;

/// A loop found in the text: the block's length and its copies in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    /// Bytes of the repeated block; 0 for a run of whitespace.
    pub block: usize,
    /// Copies of it at the end of the text; for a run of whitespace, its
    /// bytes.
    pub copies: usize,
    /// Where the text should be cut: after the second copy, or before the
    /// run of whitespace.
    pub keep: usize,
}

/// Watches one message's text, or one call's arguments, as it streams.
#[derive(Debug)]
pub struct Watcher {
    bounds: Bounds,
    text: String,
    looked_at: usize,
    /// The run of whitespace the text ends in: bytes and newlines.
    blank: (usize, usize),
}

impl Default for Watcher {
    /// A watcher of text.
    fn default() -> Watcher {
        Watcher {
            bounds: TEXT,
            text: String::new(),
            looked_at: 0,
            blank: (0, 0),
        }
    }
}

impl Watcher {
    /// A watcher of a call's arguments as they stream (their JSON text):
    /// longer blocks, and no count of whitespace, which a file's content
    /// may hold.
    pub fn arguments() -> Watcher {
        Watcher {
            bounds: ARGUMENTS,
            ..Watcher::default()
        }
    }

    /// Adds a delta; returns the loop once the text ends in one.
    pub fn push(&mut self, delta: &str) -> Option<Loop> {
        self.text.push_str(delta);
        if self.bounds != TEXT {
            return self.look();
        }
        let kept = delta.trim_end();
        let tail = &delta[kept.len()..];
        let newlines = tail.bytes().filter(|&b| b == b'\n').count();
        self.blank = if kept.is_empty() {
            (self.blank.0 + tail.len(), self.blank.1 + newlines)
        } else {
            (tail.len(), newlines)
        };
        if self.blank.1 >= MAX_BLANK_LINES || self.blank.0 >= MAX_BLANK_BYTES {
            return Some(Loop {
                block: 0,
                copies: self.blank.0,
                keep: self.text.len() - self.blank.0,
            });
        }
        self.look()
    }

    fn look(&mut self) -> Option<Loop> {
        if self.text.len() < self.looked_at + LOOK_EVERY {
            return None;
        }
        self.looked_at = self.text.len();
        find(self.text.as_bytes(), self.bounds)
    }
}

/// The loop at the end of `text`, if it ends in one within `bounds`.
pub fn find(text: &[u8], bounds: Bounds) -> Option<Loop> {
    let n = text.len();
    if n < bounds.min_span.max(MIN_BLOCK) {
        return None;
    }
    // The block's length is the distance back to an earlier copy of the
    // text's last MIN_BLOCK bytes; each candidate distance is tried, the
    // shortest first.
    let tail = &text[n - MIN_BLOCK..];
    let lowest = n.saturating_sub(MAX_BLOCK + MIN_BLOCK);
    let mut start = n - MIN_BLOCK;
    while start > lowest {
        start -= 1;
        if &text[start..start + MIN_BLOCK] != tail {
            continue;
        }
        let block = n - MIN_BLOCK - start;
        if block < bounds.min_block {
            continue;
        }
        // How far back the text stays periodic with this block.
        let mut same = 0;
        while same + block < n && text[n - 1 - same] == text[n - 1 - same - block] {
            same += 1;
        }
        let span = same + block;
        let copies = span / block;
        if !bounds.short_periods
            && has_period_below(&text[n - block..], bounds.min_block)
            && !one_line_loop(&text[n - span..], bounds.min_block)
        {
            return None;
        }
        if copies >= bounds.min_copies && span >= bounds.min_span {
            let first = n - span;
            let mut keep = first + 2 * block;
            // Never cut a character in two.
            while keep < n && !is_char_start(text[keep]) {
                keep += 1;
            }
            return Some(Loop {
                block,
                copies,
                keep,
            });
        }
    }
    None
}

/// A phrase of at least [`MIN_PHRASE`] bytes, without a line break, over
/// and over on one line for [`ONE_LINE_SPAN`] bytes: a loop even where
/// short periods are allowed to be content (a call's arguments). A small
/// model wrote `.github/dependabot.yml ` into a patch's header for 13
/// minutes; a file's repeated line (`    pass\n` four hundred times) has
/// its break in every copy, and a run of one character or a short pattern
/// (`=-=-`) is shorter than a phrase.
fn one_line_loop(run: &[u8], limit: usize) -> bool {
    if run.len() < ONE_LINE_SPAN {
        return false;
    }
    // The run is periodic throughout: its last stretch has the same
    // period, and looking at it alone keeps each look short.
    let run = &run[run.len() - ONE_LINE_SPAN..];
    let n = run.len();
    let Some(p) = (1..limit.min(n)).find(|&p| run[p..] == run[..n - p]) else {
        return false;
    };
    let phrase = &run[n - p..];
    p >= MIN_PHRASE
        && !phrase.contains(&b'\n')
        && !phrase.windows(2).any(|w| w == b"\\n")
        && !phrase.iter().all(u8::is_ascii_whitespace)
}

/// The shortest phrase [`one_line_loop`] takes for a loop.
const MIN_PHRASE: usize = 8;
/// The bytes it must span.
const ONE_LINE_SPAN: usize = 2048;

/// Whether `block` is a shorter block than `limit` bytes repeated whole
/// (a period that divides its length: a block that merely begins and
/// ends alike is no repeat).
fn has_period_below(block: &[u8], limit: usize) -> bool {
    let n = block.len();
    (1..limit.min(n)).any(|p| n.is_multiple_of(p) && block[p..] == block[..n - p])
}

fn is_char_start(b: u8) -> bool {
    (b as i8) >= -0x40
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(text: &str) -> Option<Loop> {
        let mut w = Watcher::default();
        let mut found = None;
        for chunk in text.as_bytes().chunks(7) {
            if let Some(l) = w.push(std::str::from_utf8(chunk).unwrap()) {
                found = Some(l);
                break;
            }
        }
        found
    }

    #[test]
    fn a_claim_repeated_until_the_limit_is_a_loop_cut_after_two_copies() {
        let block = "I added the section.\n```bash\necho done\n```\n";
        let text = format!("Sure.\n{}", block.repeat(60));
        let l = stream(&text).expect("a loop");
        assert_eq!(l.block, block.len());
        assert!(l.copies >= TEXT.min_copies);
        // The copies are counted from where the text starts to repeat,
        // which here is the newline before the first one.
        let two = "Sure.\n".len() + 2 * block.len();
        assert!(l.keep.abs_diff(two) <= 1, "{} vs {two}", l.keep);
    }

    #[test]
    fn text_that_only_repeats_its_shape_is_not_a_loop() {
        let mut table = String::from("| n | square |\n| --- | --- |\n");
        for i in 0..400 {
            table.push_str(&format!("| {i} | {} |\n", i * i));
        }
        assert_eq!(stream(&table), None);
        // A few copies of a long block are text; short text repeated
        // thousands of times is a loop.
        assert_eq!(
            stream(&"a fairly long line of prose, said twice.\n".repeat(5)),
            None
        );
        assert!(stream(&"ok\n".repeat(2000)).is_some());
    }

    #[test]
    fn blank_lines_token_by_token_after_an_answer_are_cut_before_them() {
        let answer = "Here is the script:\n```bash\necho hi\n```\n";
        let mut w = Watcher::default();
        let mut found = None;
        let mut sent = 0;
        for delta in std::iter::once(answer).chain(std::iter::repeat_n("\n", 100)) {
            sent += 1;
            if let Some(l) = w.push(delta) {
                found = Some(l);
                break;
            }
        }
        let l = found.expect("stuck");
        assert_eq!(l.block, 0);
        assert_eq!(
            &(answer.to_string() + &"\n".repeat(40))[..l.keep],
            answer.trim_end()
        );
        // Found at the 32nd blank line (the answer's own newline is the first).
        assert_eq!(sent, 1 + MAX_BLANK_LINES - 1);
        // Spaces without newlines count by their bytes.
        let mut w = Watcher::default();
        w.push("ok");
        assert!((0..MAX_BLANK_BYTES - 1).all(|_| w.push(" ").is_none()));
        assert!(w.push(" ").is_some());
    }

    #[test]
    fn blank_lines_that_format_an_answer_are_text() {
        let mut w = Watcher::default();
        let text: String = (0..200).map(|i| format!("paragraph {i}\n\n\n\n")).collect();
        for chunk in text.split_inclusive('\n') {
            assert_eq!(w.push(chunk), None);
        }
    }

    #[test]
    fn a_block_that_repeats_inside_itself_is_found_at_its_full_length() {
        // The last 16 bytes occur again 20 bytes back, inside the block.
        let block = "abcdefghijklmnopqrst".to_string() + "bcdefghijklmnopqrst!";
        let l = find(block.repeat(60).as_bytes(), TEXT).expect("a loop");
        assert_eq!(l.block, block.len());
    }

    #[test]
    fn a_block_with_multibyte_characters_is_cut_between_characters() {
        let block = "Ça marche — voilà, c'est fait. ";
        let l = find(block.repeat(80).as_bytes(), TEXT).expect("a loop");
        let text = block.repeat(80);
        assert!(text.is_char_boundary(l.keep));
    }

    #[test]
    fn a_call_that_repeats_one_hunk_is_a_loop_and_file_content_is_not() {
        let hunk = r#"@@ -14,7 +14,7 @@\n     \"dependencies\": {\n       \"express\": \"^4.19.2\"\n     }\n- },\n+ },\n"#;
        let args = format!(
            r#"{{"patch": "--- a/package.json\n+++ b/package.json\n{}"#,
            hunk.repeat(12)
        );
        // A block that begins and ends alike is still one block.
        assert!(!has_period_below(
            b"ab-------------------------------------------------ab",
            48
        ));
        assert!(has_period_below(&b"    pass\\n".repeat(5), 48));
        let mut w = Watcher::arguments();
        let found = args
            .as_bytes()
            .chunks(5)
            .find_map(|c| w.push(std::str::from_utf8(c).unwrap()))
            .expect("a loop");
        assert_eq!(found.block, hunk.len());
        assert!(found.copies >= ARGUMENTS.min_copies);
        // A file's content: rows that differ, a short line many times, a
        // run of blank lines, and a long line four times over.
        let rows: String = (0..300)
            .map(|i| format!("{i},widget,{},ok\\n", i * 7))
            .collect();
        let short = "    pass\\n".repeat(400);
        let blank = format!("x{}y", " ".repeat(4000));
        let four = "a long line that a template repeats now and then, on purpose\\n".repeat(4);
        let rule = "=-".repeat(2000);
        for content in [rows, short, blank, four, rule] {
            let mut w = Watcher::arguments();
            let text = format!(r#"{{"file_path": "f", "content": "{content}"}}"#);
            assert_eq!(w.push(&text), None, "{}", &text[..60]);
        }
    }

    #[test]
    fn a_phrase_over_and_over_on_one_line_of_a_call_is_a_loop() {
        let args = format!(
            r#"{{"patch": "diff --git .github/dependabot.yml {}"#,
            ".github/dependabot.yml ".repeat(400)
        );
        let mut w = Watcher::arguments();
        let found = args
            .as_bytes()
            .chunks(6)
            .find_map(|c| w.push(std::str::from_utf8(c).unwrap()))
            .expect("a loop");
        // Found within a few kilobytes, not at the output limit.
        assert!(found.keep < 200, "{found:?}");
        assert!(found.block.is_multiple_of(23), "{found:?}");
    }
}
