//! A call that hands ag's own answer back as content: a weak model, told
//! "Overwrote copy.js (302 bytes)", wrote that line over the file it had
//! just fixed; told "The person was notified; carry on.", it notified the
//! person of that, again and again. The answers of the file tools and of
//! `notify` are ag's prose about a call, never text anyone asked to have
//! in a file or on a desktop, so such a call is refused before it runs
//! and nothing is lost. Command output (`bash`, `grep`, `read`) is left
//! alone: putting what a command printed into a file is an everyday job.
//!
//! ag's notes to the model are its words too. Told "Act on it now: change
//! the files it needs changed, or answer it if it asks a question", a weak
//! model made that sentence its task list's item (and before, the text of
//! a notification). A call whose text is a sentence of a note is refused
//! the same way (`copied_note`). What a note quotes (the request, a
//! command's words, a file's text) is not ag's and is never matched.

use serde_json::Value;

use crate::protocol::{ContentBlock, Message};

/// The tools whose answers are ag's own words about a call.
const OWN_WORDS: &[&str] = &["write", "edit", "edit_lines", "patch", "delete", "notify"];

/// Text shorter than this is too common to be taken for an echo ("Done").
const SHORTEST: usize = 12;

/// Text copied from a note is matched from this many characters: a
/// clause of ag's prose, never a word or two the task may use as well.
const SHORTEST_FROM_NOTE: usize = 24;

/// The text fields of a call that end up in a file or before a person.
fn carried(name: &str, args: &Value) -> Vec<(&'static str, String)> {
    let text = |field: &'static str| {
        args.get(field)
            .and_then(Value::as_str)
            .map(|s| (field, s.to_string()))
    };
    // `field` of each element of the list `list`.
    let each = |list: &str, field: &'static str| {
        args.get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(move |e| e.get(field).and_then(Value::as_str))
            .map(move |s| (field, s.to_string()))
    };
    match name {
        "write" => text("content").into_iter().collect(),
        "edit" => text("new_string").into_iter().collect(),
        "notify" => text("message").into_iter().collect(),
        "todo" => each("items", "content").chain(text("content")).collect(),
        "edit_lines" => each("line_edits", "replacement").collect(),
        _ => Vec::new(),
    }
}

/// Why the call `name` with `args` is refused, when one of the text fields
/// it would write is, whole, an answer ag gave this prompt (`earlier`) to a
/// file tool or `notify`: that answer's text, or its first line (the
/// status a note may follow). `own_name` maps a called name to ag's tool.
pub(in crate::agent) fn echoed(
    name: &str,
    args: &Value,
    earlier: &[Message],
    own_name: impl Fn(&str) -> String,
) -> Option<String> {
    let fields = carried(name, args);
    if fields.is_empty() {
        return None;
    }
    for message in earlier.iter().rev() {
        let Message::ToolResult(r) = message else {
            continue;
        };
        let tool = own_name(&r.tool_name);
        if !OWN_WORDS.contains(&tool.as_str()) {
            continue;
        }
        let answer: String = r
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let whole = answer.trim();
        let first = whole.lines().next().unwrap_or("").trim();
        for (field, text) in &fields {
            let text = text.trim();
            if text.chars().count() >= SHORTEST && (text == whole || text == first) {
                let what = if name == "notify" {
                    "nothing was sent to the person"
                } else {
                    "nothing was written"
                };
                return Some(format!(
                    "`{field}` is ag's answer to your earlier `{tool}` call (\"{}\"), not new text, so {what}. That call is done; do not repeat its answer. {}",
                    shorten(text),
                    next_step(name, args)
                ));
            }
        }
    }
    None
}

/// Why a `notify` call is refused when the person was sent the very same
/// message earlier this prompt (`earlier`): a weak model, its work done,
/// notified the person of it again and again. `own_name` maps a called
/// name to ag's tool.
pub(in crate::agent) fn notified_already(
    name: &str,
    args: &Value,
    earlier: &[Message],
    own_name: impl Fn(&str) -> String,
) -> Option<String> {
    if name != "notify" {
        return None;
    }
    let message = args.get("message").and_then(Value::as_str)?.trim();
    let sent_ids: Vec<&str> = earlier
        .iter()
        .filter_map(|m| match m {
            Message::ToolResult(r) if !r.is_error && own_name(&r.tool_name) == "notify" => {
                Some(r.tool_call_id.as_str())
            }
            _ => None,
        })
        .collect();
    let sent = earlier.iter().any(|m| {
        let Message::Assistant(a) = m else {
            return false;
        };
        a.content.iter().any(|b| {
            matches!(b, ContentBlock::ToolCall { id, arguments, .. }
                if sent_ids.contains(&id.as_str())
                    && arguments.get("message").and_then(Value::as_str).map(str::trim) == Some(message))
        })
    });
    sent.then(|| {
        format!(
            "The person was already notified of exactly this (\"{}\") earlier in this request, so it was not sent again. {}",
            shorten(message),
            next_step(name, args)
        )
    })
}

/// Why the call `name` (ag's own name of the tool) with `args` is refused,
/// when a text field it would write or send is, whole, part of ag's own
/// prose in one of `notes`, the notes given this prompt, or (a message to
/// the person, an item of the task list) is mostly copied from it (see
/// [`mostly_from`]). Quoted text in a note (between `"` or backticks) is
/// left out of it first.
pub(in crate::agent) fn copied_note(name: &str, args: &Value, notes: &[String]) -> Option<String> {
    let fields = carried(name, args);
    if fields.is_empty() || notes.is_empty() {
        return None;
    }
    let prose: Vec<String> = notes.iter().map(|n| unquoted(n).to_lowercase()).collect();
    for (field, text) in &fields {
        // A copy of a whole note holds its quotes too: they are left out
        // of both sides alike.
        let wanted = unquoted(text).trim().to_lowercase();
        if wanted.chars().count() < SHORTEST_FROM_NOTE {
            continue;
        }
        let text = text.trim();
        let prose_only = matches!(name, "notify" | "todo");
        if prose.iter().any(|p| p.contains(&wanted)) || (prose_only && mostly_from(&wanted, &prose))
        {
            let what = match name {
                "notify" => "nothing was sent to the person",
                "todo" => "the task list was not changed",
                _ => "nothing was written",
            };
            return Some(format!(
                "`{field}` is copied from ag's own note to you (\"{}\"), not text the task asked for, so {what}. Do what the note says instead of copying it: {}",
                shorten(text),
                match name {
                    "todo" | "notify" => "change the files the request needs changed, or answer it if it asks a question.".to_string(),
                    _ => next_step(name, args),
                }
            ));
        }
    }
    None
}

/// Why the call `name` (ag's own name of the tool) with `args` is refused,
/// when a text it would write into a file holds the prompt as ag gave it:
/// a line of `attached`, the lines naming the prompt's attachments, or the
/// whole of `request`, the prompt's own words (at least
/// [`SHORTEST_FROM_NOTE`] characters). A weak model wrote the request, with
/// the list of files and the file shown below it, over the project's
/// README. Part of the request (a line it quotes to add) is never matched.
pub(in crate::agent) fn copied_prompt(
    name: &str,
    args: &Value,
    request: &str,
    attached: &[String],
) -> Option<String> {
    if !matches!(name, "write" | "edit" | "edit_lines") {
        return None;
    }
    let request = request.trim();
    for (field, text) in carried(name, args) {
        let header = text
            .lines()
            .map(str::trim)
            .find(|line| attached.iter().any(|h| h == line));
        let what = match header {
            Some(line) => format!(
                "holds `{line}`, ag's line naming what it showed you with the request, not text of a file"
            ),
            None if request.chars().count() >= SHORTEST_FROM_NOTE && text.contains(request) => {
                format!(
                    "holds the request itself (\"{}\"), not the text the file should have",
                    shorten(request)
                )
            }
            None => continue,
        };
        return Some(format!(
            "`{field}` {what}, so nothing was written. {}",
            next_step(name, args)
        ));
    }
    None
}

/// Text sent to a person or kept as a plan longer than this is not
/// searched for parts of notes: it is the model's own.
const LONGEST_SEARCHED: usize = 2_000;

/// Whether at least three quarters of `text` are runs of at least
/// [`SHORTEST_FROM_NOTE`] characters copied from `notes` (lower case, as
/// both are here). A small model sent the person ag's note with a few
/// words of its own in front ("job nightly-import failed 2 times with the
/// same error. Read the error, check the current state (read the file
/// again…"); a sentence of a note with a clause of its own after it is
/// still the model's.
fn mostly_from(text: &str, notes: &[String]) -> bool {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() > LONGEST_SEARCHED {
        return false;
    }
    let in_notes = |from: usize, to: usize| {
        let part: String = chars[from..to].iter().collect();
        notes.iter().any(|n| n.contains(&part))
    };
    let (mut copied, mut i) = (0, 0);
    while i + SHORTEST_FROM_NOTE <= chars.len() {
        if !in_notes(i, i + SHORTEST_FROM_NOTE) {
            i += 1;
            continue;
        }
        let mut end = i + SHORTEST_FROM_NOTE;
        while end < chars.len() && in_notes(i, end + 1) {
            end += 1;
        }
        copied += end - i;
        i = end;
    }
    copied * 4 >= chars.len() * 3
}

/// `note` without what it quotes: the text between double quotes and
/// between backticks, each such part replaced by a line break so that
/// nothing around it joins up.
fn unquoted(note: &str) -> String {
    let mut out = String::with_capacity(note.len());
    let mut open: Option<char> = None;
    for c in note.chars() {
        match open {
            Some(q) if c == q => open = None,
            Some(_) => {}
            None if c == '"' || c == '`' => {
                open = Some(c);
                out.push('\n');
            }
            None => out.push(c),
        }
    }
    out
}

/// What the model should send instead, for its own call.
fn next_step(name: &str, args: &Value) -> String {
    let file = args.get("file_path").and_then(Value::as_str).unwrap_or("");
    match name {
        "notify" => {
            "Notify only with something new the person should know, or go on with the task.".into()
        }
        "write" => format!(
            "If `{file}` still needs a change, send `write` with its whole new text as content (or `edit` the part that changes); if the task is done, answer with a summary."
        ),
        _ => format!(
            "If `{file}` still needs a change, send the new text of that part; if the task is done, answer with a summary."
        ),
    }
}

fn shorten(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        return text.to_string();
    }
    let cut: String = text.chars().take(MAX).collect();
    format!("{cut}...")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::protocol::ToolResultMessage;

    fn result(tool: &str, text: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: tool.into(),
            content: vec![ContentBlock::Text { text: text.into() }],
            details: Value::Null,
            is_error: false,
            timestamp: None,
        })
    }

    fn same(name: &str) -> String {
        name.to_string()
    }

    #[test]
    fn a_notification_sent_already_this_prompt_is_not_sent_again() {
        let call = |id: &str, message: &str| {
            Message::Assistant(crate::protocol::AssistantMessage {
                content: vec![ContentBlock::ToolCall {
                    id: id.into(),
                    name: "notify".into(),
                    arguments: json!({"message": message}),
                }],
                ..Default::default()
            })
        };
        let answered = |id: &str, is_error: bool| {
            let Message::ToolResult(mut r) = result("notify", "The person was notified; carry on.")
            else {
                unreachable!()
            };
            r.tool_call_id = id.into();
            r.is_error = is_error;
            Message::ToolResult(r)
        };
        let earlier = [
            call("c1", "The email address was updated."),
            answered("c1", false),
        ];
        let why = notified_already(
            "notify",
            &json!({"message": " The email address was updated. "}),
            &earlier,
            same,
        )
        .expect("refused");
        assert!(why.starts_with("The person was already notified of exactly this (\"The email address was updated.\")"), "{why}");
        // Something new is sent; so is a message whose first sending failed.
        assert_eq!(
            notified_already("notify", &json!({"message": "Tests pass."}), &earlier, same),
            None
        );
        let failed = [
            call("c1", "The email address was updated."),
            answered("c1", true),
        ];
        assert_eq!(
            notified_already(
                "notify",
                &json!({"message": "The email address was updated."}),
                &failed,
                same
            ),
            None
        );
        assert_eq!(
            notified_already("write", &json!({"message": "x"}), &earlier, same),
            None
        );
    }

    #[test]
    fn a_write_of_the_last_writes_answer_is_refused_with_the_file_named() {
        let earlier = [result("write", "Overwrote copy.js (302 bytes)")];
        let why = echoed(
            "write",
            &json!({"file_path": "copy.js", "content": "Overwrote copy.js (302 bytes)"}),
            &earlier,
            same,
        )
        .expect("refused");
        assert!(
            why.contains("`content` is ag's answer to your earlier `write` call (\"Overwrote copy.js (302 bytes)\")"),
            "{why}"
        );
        assert!(why.contains("nothing was written"), "{why}");
        assert!(why.contains("`copy.js` still needs a change"), "{why}");
    }

    #[test]
    fn the_status_line_before_a_note_counts_and_so_does_another_agents_name() {
        let earlier = [result(
            "edit_file",
            "Replaced 1 occurrence in a.py (1 line changed)\n\nThis same file change has now been made 3 times.",
        )];
        let own = |n: &str| {
            if n == "edit_file" {
                "edit".to_string()
            } else {
                n.to_string()
            }
        };
        let args = json!({"file_path": "a.py", "old_string": "x", "new_string": "Replaced 1 occurrence in a.py (1 line changed)"});
        assert!(echoed("edit", &args, &earlier, own).is_some());
        let lines = json!({"file_path": "a.py", "line_edits": [{"start_line": 1, "end_line": 1, "replacement": "Replaced 1 occurrence in a.py (1 line changed)"}]});
        assert!(echoed("edit_lines", &lines, &earlier, own).is_some());
    }

    #[test]
    fn notifying_the_notify_answer_is_refused() {
        let earlier = [result("notify", "The person was notified; carry on.")];
        let why = echoed(
            "notify",
            &json!({"message": "The person was notified; carry on."}),
            &earlier,
            same,
        )
        .expect("refused");
        assert!(why.contains("nothing was sent to the person"), "{why}");
    }

    #[test]
    fn a_sentence_of_a_note_copied_into_a_call_is_refused_but_what_it_quotes_is_not() {
        let notes = [
            "\n\nThis call returned what it returned before: nothing it looks at changed in between. The request was: \"Add a line saying hello from the greeting script\" Act on it now: change the files it needs changed, or answer it if it asks a question.".to_string(),
        ];
        let todo = json!({"items": [{"content": "Change the files it needs changed, or answer it if it asks a question."}]});
        let why = copied_note("todo", &todo, &notes).expect("refused");
        assert!(
            why.contains("`content` is copied from ag's own note to you"),
            "{why}"
        );
        assert!(why.contains("the task list was not changed"), "{why}");
        let notify = json!({"message": "nothing it looks at changed in between"});
        assert!(copied_note("notify", &notify, &notes).is_some());
        // A copy of the whole note, quote and all.
        let whole = json!({"message": notes[0].trim()});
        assert!(copied_note("notify", &whole, &notes).is_some());
        // The request's words, quoted in the note, may well be the content.
        let write = json!({"file_path": "README.md", "content": "Add a line saying hello from the greeting script"});
        assert!(copied_note("write", &write, &notes).is_none());
        // A short phrase, and text around a sentence of the note, are new.
        let short = json!({"items": [{"content": "Act on it now"}]});
        assert!(copied_note("todo", &short, &notes).is_none());
        let longer = json!({"items": [{"content": "Change the files it needs changed, then run the tests"}]});
        assert!(copied_note("todo", &longer, &notes).is_none());
        // A note sent on with a few words of the model's in front: to a
        // person, or as a plan, it is the note all the same. In a file it
        // may be text the file is meant to hold.
        let fronted = json!({"message": "greeting failed: this call returned what it returned before: nothing it looks at changed in between."});
        assert!(copied_note("notify", &fronted, &notes).is_some());
        let fronted = json!({"content": "Greeting: this call returned what it returned before: nothing it looks at changed in between."});
        assert!(copied_note("write", &fronted, &notes).is_none());
        // Nothing is matched with no note given, or for a tool that runs text.
        assert!(copied_note("todo", &todo, &[]).is_none());
        let bash = json!({"command": "echo Change the files it needs changed, or answer it if it asks a question."});
        assert!(copied_note("bash", &bash, &notes).is_none());
    }

    #[test]
    fn the_prompt_as_ag_gave_it_is_no_file_text() {
        let request = "The disk check always warns, even at 40%. Please fix it.";
        let attached = ["[Attached file `check.sh` (300 bytes)]".to_string()];
        let write = |content: &str| json!({"file_path": "README.md", "content": content});
        // The request, the list and the file shown below it, over a README.
        let copy = format!("{request}\n[Attached file `check.sh` (300 bytes)]\nused=$(df)\n");
        let why = copied_prompt("write", &write(&copy), request, &attached).unwrap();
        assert!(
            why.contains("`[Attached file `check.sh` (300 bytes)]`"),
            "{why}"
        );
        assert!(why.contains("nothing was written"), "{why}");
        let why = copied_prompt("write", &write(request), request, &[]).unwrap();
        assert!(why.contains("the request itself"), "{why}");
        let edit =
            json!({"file_path": "a", "old_string": "x", "new_string": format!("# {request}")});
        assert!(copied_prompt("edit", &edit, request, &[]).is_some());
        // Part of the request (the line it asks to add) is file text, and
        // a task list may hold the request as its item.
        let add = "Add the line `Run make lint before you push` to the README";
        assert!(
            copied_prompt("write", &write("Run make lint before you push\n"), add, &[]).is_none()
        );
        let todo = json!({"items": [{"content": request}]});
        assert!(copied_prompt("todo", &todo, request, &attached).is_none());
        // A short request is too common to be taken for a copy.
        assert!(copied_prompt("write", &write("fix it\n"), "fix it", &[]).is_none());
    }

    #[test]
    fn command_output_short_text_and_new_text_go_through() {
        // What a command printed may well belong in a file.
        let earlier = [
            result("bash", "a.txt\nb.txt\n\nexit code: 0"),
            result("read", "     1\tprint('hi')"),
            result("write", "Created new file notes.md (5 bytes)"),
        ];
        let write = |content: &str| json!({"file_path": "list.txt", "content": content});
        assert!(
            echoed(
                "write",
                &write("a.txt\nb.txt\n\nexit code: 0"),
                &earlier,
                same
            )
            .is_none()
        );
        assert!(echoed("write", &write("     1\tprint('hi')"), &earlier, same).is_none());
        assert!(echoed("write", &write("a new line of notes"), &earlier, same).is_none());
        // Part of an answer, or text around it, is not the answer.
        assert!(
            echoed(
                "write",
                &write("Created new file notes.md (5 bytes) and more"),
                &earlier,
                same
            )
            .is_none()
        );
        let short = [result("notify", "Saved it ok")];
        assert!(echoed("notify", &json!({"message": "Saved it ok"}), &short, same).is_none());
        // Tools that carry no such text are not looked at.
        assert!(
            echoed(
                "bash",
                &json!({"command": "Created new file notes.md (5 bytes)"}),
                &earlier,
                same
            )
            .is_none()
        );
    }
}
