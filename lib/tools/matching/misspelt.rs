//! A search that misses by a letter or two. Asked to fix a typo, a small
//! model writes the word as it should be on both sides of an edit
//! (`receive` for a file's `recieve`) and repeats the call, because the
//! text it copies from is its own. When one stretch of one line differs
//! from the searched text by a character or two, and that stretch occurs
//! once in the file, the miss can name it: the model's own call with the
//! file's text as `old_string` then lands. Nothing is changed on a guess;
//! the call still fails, and says how it would succeed.

/// Searches shorter than this find too many near neighbours to mean one.
const MIN_CHARS: usize = 4;
/// Longer ones are not a misspelt word but a stale copy: the closest-text
/// explanation serves them.
const MAX_CHARS: usize = 200;
/// Character comparisons allowed over the whole file: a large file is
/// not scanned for a hint.
const MAX_WORK: usize = 30_000_000;
/// Files larger than this are not scanned at all.
const MAX_BYTES: usize = 8 << 20;

/// The file's own text that the searched text most likely meant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Near {
    /// The line it is on, from 1.
    pub line: usize,
    /// The text, exactly as in the file.
    pub text: String,
    /// Characters to insert, delete, replace or swap to get from one to
    /// the other.
    pub distance: usize,
}

/// The one stretch of `content` within a line that differs from `old`
/// (one line, surrounding whitespace ignored) by at most a fifth of its
/// characters (at least one), closer than any other, and found only once
/// in the file. `None` when there is no such stretch, or more than one.
pub fn near_miss(content: &[u8], old: &str) -> Option<Near> {
    let wanted = old.trim();
    let want: Vec<char> = wanted.chars().collect();
    if wanted.contains('\n')
        || want.len() < MIN_CHARS
        || want.len() > MAX_CHARS
        || content.len() > MAX_BYTES
    {
        return None;
    }
    let limit = (want.len() / 5).max(1);
    let words = tokens(wanted).len();
    let text = String::from_utf8_lossy(content);
    let mut best: Option<Near> = None;
    let mut tied = false;
    let mut work = 0usize;
    for (i, line) in text.lines().enumerate() {
        let toks = tokens(line);
        for n in words.saturating_sub(1).max(1)..=words + 1 {
            for w in toks.windows(n) {
                let candidate = &line[w[0].0..w[n - 1].1];
                let count = candidate.chars().count();
                if count.abs_diff(want.len()) > limit {
                    continue;
                }
                work += count * want.len();
                if work > MAX_WORK {
                    return None;
                }
                let have: Vec<char> = candidate.chars().collect();
                let d = distance(&want, &have);
                if d == 0 || d > limit {
                    continue;
                }
                match &best {
                    Some(b) if d > b.distance => {}
                    Some(b) if d == b.distance => tied |= b.text != candidate,
                    _ => {
                        tied = false;
                        best = Some(Near {
                            line: i + 1,
                            text: candidate.to_string(),
                            distance: d,
                        });
                    }
                }
            }
        }
    }
    let best = best.filter(|_| !tied)?;
    (text.matches(best.text.as_str()).count() == 1).then_some(best)
}

/// The words of a line (runs of letters, digits and `_`) and each other
/// character that is not whitespace, as byte ranges.
fn tokens(line: &str) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut word: Option<usize> = None;
    for (at, c) in line.char_indices() {
        let is_word = c.is_alphanumeric() || c == '_';
        if is_word {
            word.get_or_insert(at);
            continue;
        }
        if let Some(start) = word.take() {
            out.push((start, at));
        }
        if !c.is_whitespace() {
            out.push((at, at + c.len_utf8()));
        }
    }
    if let Some(start) = word {
        out.push((start, line.len()));
    }
    out
}

/// Edit distance counting a swap of two neighbours as one edit (optimal
/// string alignment): the usual typo is one.
fn distance(a: &[char], b: &[char]) -> usize {
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// `new`, with the correction that turns `old` into the file's `near`
/// made in it too, when `new` holds that spot as `old` has it. A model
/// that left a quote out of `port: 3000` (the file has `port": 3000`) left
/// it out of its `port: 8080` as well, and the call the hint names would
/// have broken the JSON. `None` when `old` and `new` are the same (a typo
/// fixed on both sides: the file's text is what `new` replaces), when the
/// spot lies in what the edit changes (its touching counts), or when `new`
/// does not hold it.
pub fn carry(old: &str, near: &str, new: &str) -> Option<String> {
    let old = old.trim();
    if old == new.trim() {
        return None;
    }
    // Where `near` and `new` each differ from `old`: byte ranges of `old`.
    let (fix_from, fix_to) = differing(old, near);
    let (change_from, change_to) = differing(old, new);
    let fixed = &near[fix_from..near.len() - (old.len() - fix_to)];
    if fix_to < change_from {
        // Before the change: `new` starts with `old`'s text up to there.
        let rest = new.strip_prefix(&old[..fix_to])?;
        Some(format!("{}{fixed}{rest}", &old[..fix_from]))
    } else if change_to < fix_from {
        // After it: `new` ends with `old`'s text from there.
        let head = new.strip_suffix(&old[fix_from..])?;
        Some(format!("{head}{fixed}{}", &old[fix_to..]))
    } else {
        None
    }
}

/// The byte range of `a` that differs from `b`: what is left of `a`
/// once their common start and common end are taken off.
fn differing(a: &str, b: &str) -> (usize, usize) {
    let (start, end) = super::tolerant::common_ends(a, b);
    (start, a.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    const README: &str = "# mailer\n\nSends the reports every morning.\n\nYou will recieve one email per project.\nReplies go to the team's inbox.\n";

    #[test]
    fn a_misspelt_word_is_named_with_its_line() {
        let near = near_miss(README.as_bytes(), "receive").unwrap();
        assert_eq!(
            near,
            Near {
                line: 5,
                text: "recieve".into(),
                distance: 1
            }
        );
    }

    #[test]
    fn several_words_and_punctuation_match_as_a_stretch() {
        let file = "BASE = 1\nTIMEOUT_SECONDS = 30\nRETRIES = 3\n";
        let near = near_miss(file.as_bytes(), "TIMEOUT_SECOND = 30").unwrap();
        assert_eq!(near.text, "TIMEOUT_SECONDS = 30");
        assert_eq!(near.line, 2);
    }

    #[test]
    fn nothing_close_enough_or_two_equally_close_gives_no_hint() {
        assert_eq!(near_miss(README.as_bytes(), "elephant"), None);
        // `cat`-sized searches mean nothing in particular.
        assert_eq!(near_miss(b"cot cut\n", "cat"), None);
        // Two different stretches one edit away: which one is meant is a guess.
        assert_eq!(near_miss(b"colour\ncolar\n", "color"), None);
        // The one near text twice in the file: old_string would be ambiguous.
        assert_eq!(near_miss(b"recieve\nrecieve\n", "receive"), None);
        // Several lines are a stale copy, not a typo.
        assert_eq!(near_miss(README.as_bytes(), "You will\nreceive"), None);
    }

    #[test]
    fn distance_counts_a_swap_as_one() {
        let c = |s: &str| s.chars().collect::<Vec<char>>();
        assert_eq!(distance(&c("receive"), &c("recieve")), 1);
        assert_eq!(distance(&c("kitten"), &c("sitting")), 3);
        assert_eq!(distance(&c(""), &c("abc")), 3);
    }

    #[test]
    fn the_files_correction_is_carried_into_new_string_where_it_holds_the_spot() {
        // A quote left out before the change, on both sides.
        assert_eq!(
            carry("port: 3000", "port\": 3000", "port: 8080").as_deref(),
            Some("port\": 8080")
        );
        // After the change.
        assert_eq!(
            carry("x = 1 # colur", "x = 1 # colour", "x = 2 # colur").as_deref(),
            Some("x = 2 # colour")
        );
        // A typo fixed on both sides: the file's text is what is replaced.
        assert_eq!(carry("receive", "recieve", "receive"), None);
        // The spot is part of what the edit changes.
        assert_eq!(
            carry("retrn 1", "return 1", "retrn 2"),
            Some("return 2".into())
        );
        assert_eq!(carry("count: 3", "count: 4", "count: 5"), None);
        // new_string does not hold the spot.
        assert_eq!(carry("port: 3000", "port\": 3000", "8080"), None);
        // Characters of more than one byte.
        assert_eq!(
            carry("prix: 3 €", "prix\": 3 €", "prix: 4 €").as_deref(),
            Some("prix\": 4 €")
        );
    }
}
