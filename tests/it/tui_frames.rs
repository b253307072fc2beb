//! ag-tui's frames, drawn from scripted event lines into ratatui's
//! TestBackend and compared with committed insta snapshots; and the render
//! cache, shown to re-render only what changed.

use ag::tui::app::App;
use ag::tui::editor::Editor;
use ag::tui::theme::Theme;
use ag::tui::view::View;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};

fn app_after(events: &[Value]) -> App {
    let mut app = App::new(Editor::default());
    app.model = Some("test/scripted".into());
    for e in events {
        app.on_line(&e.to_string());
    }
    app
}

fn frame(app: &App, view: &mut View, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view.draw(f, app)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..h {
        let mut row = String::new();
        for x in 0..w {
            row.push_str(buf[(x, y)].symbol());
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

fn usage(input: u64) -> Value {
    json!({"input": input, "output": 40, "cost": {"total": 0.0123}})
}

fn conversation() -> Vec<Value> {
    let answer = "## Plan\n\nThe test fails because `parse` drops the last line.\n\n1. read the parser\n2. fix the loop\n\n```rust\nfor line in text.lines() {\n    out.push(line);\n}\n```\n\nDone, *all* green.";
    vec![
        json!({"type": "agent_start"}),
        json!({"type": "message_start", "message": {"role": "user", "content": "fix the failing test"}}),
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json!({"type": "message_update", "event": {"type": "thinking_delta", "index": 0, "delta": "the parser is suspect"}}),
        json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "thinking", "thinking": "the parser is suspect"}, {"type": "tool_call", "id": "c1", "name": "bash", "arguments": {"command": "cargo test"}}], "usage": usage(1200), "stop_reason": "tool_use"}}),
        json!({"type": "tool_execution_start", "tool_call_id": "c1", "tool_name": "bash", "arguments": {"command": "cargo test"}, "timestamp": "2026-01-01T00:00:01Z"}),
        json!({"type": "tool_execution_end", "tool_call_id": "c1", "tool_name": "bash", "output": "test parse ... FAILED\n1 failed", "is_error": true, "timestamp": "2026-01-01T00:00:03.400Z"}),
        json!({"type": "tool_execution_start", "tool_call_id": "c2", "tool_name": "edit", "arguments": {"file_path": "src/parse.rs", "old_string": "a", "new_string": "b"}, "timestamp": "2026-01-01T00:00:04Z"}),
        json!({"type": "tool_execution_end", "tool_call_id": "c2", "tool_name": "edit", "output": "Edited src/parse.rs", "details": {"diff": "--- a/src/parse.rs\n+++ b/src/parse.rs\n@@ -1,2 +1,2 @@\n-while let Some(l) = it.next() {\n+for line in text.lines() {"}, "is_error": false, "timestamp": "2026-01-01T00:00:04.120Z"}),
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": answer}], "usage": usage(2400), "stop_reason": "stop", "model": "test/scripted"}}),
        json!({"type": "agent_end", "messages": [], "outcome": "finished", "usage": usage(3600)}),
    ]
}

#[test]
fn a_finished_conversation_at_80x24() {
    let app = app_after(&conversation());
    let mut view = View::new(Theme::new(true));
    insta::assert_snapshot!(frame(&app, &mut view, 80, 24));
}

#[test]
fn an_expanded_edit_shows_its_diff_and_a_narrow_screen_wraps() {
    let mut app = app_after(&conversation());
    app.on_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL));
    let mut view = View::new(Theme::new(true));
    insta::assert_snapshot!(frame(&app, &mut view, 48, 30));
}

#[test]
fn an_approval_question_and_a_queued_prompt_stand_above_the_editor() {
    let mut app = app_after(&[
        json!({"type": "agent_start"}),
        json!({"type": "message_start", "message": {"role": "user", "content": "clean up"}}),
        json!({"type": "approval_request", "tool_call_id": "c1", "tool_name": "bash", "arguments": {"command": "rm -rf build"}, "reason": "recursive delete"}),
    ]);
    for c in "then run the tests".chars() {
        app.editor.insert(c);
    }
    // y/n/a answer only an empty editor: this is queued text.
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE));
    for c in "and commit".chars() {
        app.editor.insert(c);
    }
    let mut view = View::new(Theme::new(true));
    insta::assert_snapshot!(frame(&app, &mut view, 80, 16));
}

#[test]
fn slash_completion_lists_the_matching_commands() {
    let mut app = app_after(&[]);
    app.editor.set("/re");
    let mut view = View::new(Theme::new(true));
    insta::assert_snapshot!(frame(&app, &mut view, 80, 12));
}

#[test]
fn a_crashed_child_is_reported_with_its_stderr() {
    let mut app = app_after(&[]);
    app.child = ag::tui::app::Child::Ended(
        "ag-loop exited with status 2\nag-loop: error: unknown provider `nope`".into(),
    );
    let mut view = View::new(Theme::new(true));
    insta::assert_snapshot!(frame(&app, &mut view, 80, 10));
}

/// Finished entries are rendered once; each later frame renders only the
/// streaming answer, and of it only the paragraph still growing.
#[test]
fn frames_while_streaming_render_only_the_growing_tail() {
    let mut events = Vec::new();
    for i in 0..2000 {
        events.push(json!({"type": "message_start", "message": {"role": "user", "content": format!("prompt {i}")}}));
    }
    events.push(json!({"type": "agent_start"}));
    events.push(json!({"type": "message_start", "message": {"role": "assistant", "content": []}}));
    let mut app = app_after(&events);
    let mut view = View::new(Theme::new(true));
    frame(&app, &mut view, 80, 24);
    let first = view.cache.work;
    // Only what fits on the screen was rendered, not the 2000 entries.
    assert!(first.entries < 30, "{first:?}");
    let paragraph = "word ".repeat(40) + "\n\n";
    let n = 500;
    for _ in 0..n {
        app.on_line(&json!({"type": "message_update", "event": {"type": "text_delta", "index": 0, "delta": paragraph}}).to_string());
        frame(&app, &mut view, 80, 24);
    }
    let w = view.cache.work;
    assert_eq!(w.entries - first.entries, n, "one entry per frame: {w:?}");
    // Each paragraph parsed about once (the tail at most twice), not the
    // whole answer per frame (which would be n*n/2 paragraphs).
    let parsed = (w.bytes - first.bytes) / paragraph.len() as u64;
    assert!(parsed <= 2 * n, "{parsed} paragraphs parsed for {n}");
}

/// What a streamed answer shows while it streams equals what it shows once
/// complete, so the cached paragraphs do not change the picture.
#[test]
fn incremental_rows_equal_a_full_render() {
    let text = "# Title\n\nsome *text* here\n\n- a\n- b\n\n```sh\necho hi\n\n\necho there\n```\n\n1. one\n2. two\n\nend";
    let mut streaming = app_after(&[
        json!({"type": "agent_start"}),
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
    ]);
    let mut view = View::new(Theme::new(true));
    for piece in text.as_bytes().chunks(3) {
        let delta = String::from_utf8_lossy(piece);
        streaming.on_line(&json!({"type": "message_update", "event": {"type": "text_delta", "index": 0, "delta": delta}}).to_string());
        frame(&streaming, &mut view, 60, 30);
    }
    let live = frame(&streaming, &mut view, 60, 30);
    let whole = app_after(&[
        json!({"type": "agent_start"}),
        json!({"type": "message_start", "message": {"role": "assistant", "content": []}}),
        json!({"type": "message_update", "event": {"type": "text_delta", "index": 0, "delta": text}}),
    ]);
    let mut fresh = View::new(Theme::new(true));
    let mut done = app_after(&[
        json!({"type": "message_end", "message": {"role": "assistant", "content": [{"type": "text", "text": text}], "usage": {}, "stop_reason": "stop"}}),
    ]);
    done.model = streaming.model.clone();
    let _ = whole;
    let complete = frame(&done, &mut fresh, 60, 30);
    let strip = |s: &str| {
        s.lines()
            .filter(|l| {
                !l.trim().is_empty()
                    && !l.contains('─')
                    && !l.contains("test/scripted")
                    && !l.starts_with('›')
            })
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&live), strip(&complete));
}
