//! ag-tui's command line (the man page comes from here).

use clap::Parser;

/// The interactive terminal front end of ag-loop.
///
/// ag-tui starts `ag-loop --json` as a child and only talks to it through
/// its protocol: the events it prints come in and are drawn, and prompts,
/// steers, interrupts and approval answers go out as lines on its stdin. No
/// agent logic lives here, so anything that speaks the protocol can stand in
/// for ag-loop: `ag-tui --loop-cmd 'ssh host ag-loop --json'` drives an
/// agent on another machine over a pipe.
///
/// Keys: Enter sends (while the agent works, the prompt is queued and sent
/// when it is done); Alt+Enter, Shift+Enter or Ctrl+J start a new line; Esc
/// interrupts the running turn; Ctrl+S sends the text (or the first queued
/// prompt) as a steer, delivered after the running tool calls; Ctrl+O
/// expands the last tool call (a diff for edits and patches, the output
/// otherwise); Up and Down walk the prompt history (kept in
/// $AG_HOME/tui-history.jsonl), Ctrl+R searches it; Ctrl+A, Ctrl+E, Ctrl+W,
/// Ctrl+U and Ctrl+K edit as in readline; Ctrl+C clears the line, or quits
/// on an empty one; y, n or a answer an approval question (a: always, for
/// what the question names, for the rest of the session); Shift+Up/Down and
/// PageUp/PageDown scroll. /help lists the slash commands: /help /quit
/// /clear /cost /model /thinking /tools /skills /export /fork /resume /rewind
/// /compact. /model PROVIDER/ID and /thinking off|low|medium|high switch the
/// running ag-loop from its next prompt on (its set_model and set_reasoning
/// commands), and the session records it.
#[derive(Debug, Parser)]
#[command(
    name = "ag-tui",
    version,
    after_help = "Exit status: 0 when the person quit, 2 usage or set-up error (no terminal).\n\n\
The screen is restored on exit, on SIGTERM or SIGHUP and after a panic. A child that ends or crashes is reported \
with the end of its stderr, and the TUI stays; /clear or /resume starts it again. NO_COLOR turns colours off.\n\n\
The session commands (/resume, /fork, /export, /tools, /rewind, and the history shown by --continue and --session) \
run ag-session on this machine, so with --loop-cmd on another machine they see this machine's sessions."
)]
pub struct Args {
    /// A first prompt, sent as soon as ag-loop runs.
    pub prompt: Option<String>,
    /// Attach FILE to the first prompt (repeatable; with a PROMPT): an image,
    /// a PDF (its text) or a text file, read by ag-loop as `ag-loop --attach`
    /// reads it. Later, /attach FILE attaches to the next prompt, and a word
    /// @PATH naming a file in any prompt attaches it.
    #[arg(long = "file", value_name = "FILE", requires = "prompt")]
    pub files: Vec<String>,
    /// Resume the latest session of the working directory.
    #[arg(short = 'c', long = "continue", conflicts_with = "session")]
    pub continue_: bool,
    /// Resume the session with this id (or unique prefix or suffix).
    #[arg(long, value_name = "ID")]
    pub session: Option<String>,
    /// The model as provider/model, passed to ag-loop as -m (a resumed
    /// session otherwise keeps its own).
    #[arg(short, long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Run this shell command line instead of `ag-loop --json` (with sh -c;
    /// `--approve-on-stdin`, the session and model flags and the arguments
    /// after `--` are appended). It must print ag-loop's JSON events.
    #[arg(long, value_name = "CMD")]
    pub loop_cmd: Option<String>,
    /// Join a live session of ag-serve (its id, or a unique prefix or
    /// suffix) through `ag-serve attach`: its history, then its live events,
    /// shared with every other client on it. Quitting detaches and leaves it
    /// running; a session that is not running is resumed. Needs a running
    /// `ag-serve`.
    #[arg(long, value_name = "ID", conflicts_with_all = ["continue_", "session", "loop_cmd"])]
    pub attach: Option<String>,
    /// More ag-loop flags, after `--` (`ag-tui -- --tools readonly --max-cost 1`).
    #[arg(last = true, value_name = "AG_LOOP_ARGS")]
    pub loop_args: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn flags_after_the_separator_go_to_ag_loop() {
        let a = Args::try_parse_from(["ag-tui", "-m", "x/y", "hi", "--", "--tools", "readonly"])
            .unwrap();
        assert_eq!(a.prompt.as_deref(), Some("hi"));
        assert_eq!(a.loop_args, ["--tools", "readonly"]);
    }
}
