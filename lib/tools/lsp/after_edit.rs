//! Diagnostics after a change: what ag-write, ag-edit and ag-patch add to
//! a successful result when the file's language has a server. The tool
//! reads the file's text before the change ([`Watch::file`]), makes the
//! change, then asks the session's warm host ([`Watch::finish`]) for the
//! errors the server finds now that it did not find before, waiting a
//! bounded time. The hook lives in the tool binaries, so ag-loop, ag-mcp
//! and a shell get the same behaviour.
//!
//! On when [`ENV`] says so: ag-loop and ag-mcp set it unless told not to;
//! from a shell it is off unless the user sets it, as a one-off edit
//! should not start a language server.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;

use super::servers::{Server, Table};
use super::wire::{Answer, Job, Request, Work};
use crate::protocol::{ChangeDiagnostics, Diagnostic, DiagnosticsStatus, FileDiagnostics};
use crate::tool_protocol::{Context, Note, ToolOutput};

/// `1` turns diagnostics after a change on, anything else off.
pub const ENV: &str = "AG_LSP_DIAGNOSTICS";
/// Seconds a change waits for its diagnostics (else `wait` in
/// `lsp.toml`, else 2).
pub const WAIT_ENV: &str = "AG_LSP_WAIT";

/// The most new errors a result lists per file.
const MAX_LISTED: usize = 20;

/// Whether diagnostics after a change are on in this process.
pub fn enabled() -> bool {
    std::env::var(ENV).is_ok_and(|v| matches!(v.trim(), "1" | "true" | "on" | "yes"))
}

/// Files about to be changed, with their text before.
pub struct Watch {
    table: Table,
    top: PathBuf,
    files: Vec<Watched>,
}

struct Watched {
    server: Server,
    real: PathBuf,
    shown: String,
    before: Option<String>,
}

impl Watch {
    /// Before a change of the files named `paths` (as the call gives
    /// them), whose text is read now: `None` when diagnostics are off or
    /// no server serves them.
    pub fn files<'a>(ctx: &Context, paths: impl IntoIterator<Item = &'a str>) -> Option<Watch> {
        if !enabled() {
            return None;
        }
        let known = paths.into_iter().filter_map(|p| {
            let real = ctx.resolve(p).ok()?;
            let before = match std::fs::read(&real) {
                Ok(b) => Some(String::from_utf8(b).ok()?),
                Err(_) => None,
            };
            Some((real, before))
        });
        Watch::known(ctx, known)
    }

    /// After a change whose texts before are known (ag-patch keeps them):
    /// each file and its text before (`None`: it is new).
    pub fn known(
        ctx: &Context,
        changed: impl IntoIterator<Item = (PathBuf, Option<String>)>,
    ) -> Option<Watch> {
        if !enabled() {
            return None;
        }
        let table = Table::load().ok()?;
        let mut files: Vec<Watched> = Vec::new();
        for (real, before) in changed {
            let Some(server) = table.for_file(&real).cloned() else {
                continue;
            };
            if files.iter().any(|w| w.real == real) {
                continue;
            }
            files.push(Watched {
                server,
                shown: ctx.show(&real),
                real,
                before,
            });
        }
        if files.is_empty() {
            return None;
        }
        Some(Watch {
            table,
            top: super::workspace_top(ctx),
            files,
        })
    }

    /// Before a change of one file.
    pub fn file(ctx: &Context, path: &str) -> Option<Watch> {
        Watch::files(ctx, [path])
    }

    /// After the change: the result with the diagnostics added.
    pub fn finish(self, out: ToolOutput) -> ToolOutput {
        let wait = wait(&self.table);
        let jobs: Vec<Job> = self
            .files
            .iter()
            .map(|w| Job {
                root: w.server.root_for(&w.real, &self.top),
                cache: super::cache_dir(&w.server),
                server: w.server.clone(),
                work: Work::Changed {
                    file: w.real.clone(),
                    shown: w.shown.clone(),
                    before: w.before.clone(),
                },
            })
            .collect();
        let req = Request {
            wait_ms: wait.as_millis() as u64,
            jobs,
        };
        let (files, late) = match super::ask(&req, wait) {
            Ok(reply) => {
                let files = reply
                    .answers
                    .into_iter()
                    .zip(&self.files)
                    .map(|(a, w)| match a {
                        Answer::Diagnostics(d) => d,
                        Answer::Failed(why) => super::unavailable(&w.shown, &w.server.name, why),
                        _ => super::unavailable(
                            &w.shown,
                            &w.server.name,
                            "the lsp helper answered something else".into(),
                        ),
                    })
                    .collect();
                (files, reply.late)
            }
            Err(why) => (
                self.files
                    .iter()
                    .map(|w| super::unavailable(&w.shown, &w.server.name, why.clone()))
                    .collect(),
                Vec::new(),
            ),
        };
        add(out, files, late)
    }
}

/// The wait: [`WAIT_ENV`], else the config file's, else 2 s.
fn wait(table: &Table) -> Duration {
    std::env::var(WAIT_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| (0.0..=600.0).contains(s))
        .map(Duration::from_secs_f64)
        .or(table.wait)
        .unwrap_or(super::servers::DEFAULT_WAIT)
}

/// Adds the files' diagnostics (and late ones) to a result: notes for the
/// model, `details.diagnostics` for programs.
pub fn add(out: ToolOutput, files: Vec<FileDiagnostics>, late: Vec<FileDiagnostics>) -> ToolOutput {
    let mut notes = Vec::new();
    for d in &files {
        notes.extend(note(d));
    }
    notes.extend(late_notes(&late));
    let mut out = out.with_notes(notes);
    let mut all = files;
    all.extend(late);
    if let Some(obj) = out.details.as_object_mut() {
        obj.insert(
            "diagnostics".into(),
            json!(ChangeDiagnostics { files: all }),
        );
    }
    out
}

/// Notes for diagnostics that came late.
pub fn late_notes(late: &[FileDiagnostics]) -> Vec<Note> {
    late.iter().filter_map(note).collect()
}

/// One line of a diagnostic: `b.py:3:12: message [code]`.
pub fn diagnostic_line(path: &str, d: &Diagnostic, with_severity: bool) -> String {
    format!(
        "{path}:{}:{}: {}{}{}",
        d.line,
        d.column,
        if with_severity {
            format!("{}: ", d.severity)
        } else {
            String::new()
        },
        d.message.split_whitespace().collect::<Vec<_>>().join(" "),
        d.code
            .as_deref()
            .map(|c| format!(" [{c}]"))
            .unwrap_or_default()
    )
}

fn errors(n: u32) -> String {
    format!("{n} error{}", if n == 1 { "" } else { "s" })
}

/// What the model reads about one file.
fn note(d: &FileDiagnostics) -> Option<Note> {
    let late = if d.late {
        format!("Late diagnostics for an earlier change of {}: ", d.path)
    } else {
        String::new()
    };
    let already = match d.existing {
        0 => String::new(),
        n => format!(" ({} already there)", errors(n)),
    };
    match d.status {
        DiagnosticsStatus::Checked if d.new.is_empty() => Some(Note::aside(format!(
            "{late}{}: no new errors{already}",
            d.server
        ))),
        DiagnosticsStatus::Checked => {
            let mut text = format!(
                "{late}this change brought in {} ({}){already}:",
                errors(d.new.len() as u32),
                d.server
            );
            for x in d.new.iter().take(MAX_LISTED) {
                text.push('\n');
                text.push_str(&diagnostic_line(&d.path, x, false));
            }
            if d.new.len() > MAX_LISTED {
                text.push_str(&format!("\n... and {} more", d.new.len() - MAX_LISTED));
            }
            Some(Note::warning(text))
        }
        DiagnosticsStatus::Pending => Some(Note::aside(format!(
            "{late}diagnostics of {} not ready: {}; they come with the next edit's result",
            d.path,
            d.reason.as_deref().unwrap_or("no answer yet")
        ))),
        DiagnosticsStatus::Unavailable => Some(Note::aside(format!(
            "{late}diagnostics unavailable for {}: {}",
            d.path,
            d.reason.as_deref().unwrap_or("no reason given")
        ))),
    }
}
