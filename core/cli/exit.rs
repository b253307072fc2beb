//! One exit-status table for every binary.

use std::process::ExitCode;

use super::output::error_line;

/// How a binary ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// 0: the operation succeeded.
    Success,
    /// 1: the operation failed (a tool error, a model error).
    Failure,
    /// 2: could not run: usage, input or I/O error.
    Input,
    /// 124: a time limit passed.
    Timeout,
    /// 128+N: ended by signal N.
    Signal(i32),
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> ExitCode {
        ExitCode::from(self.number())
    }

    /// The number behind the code.
    pub fn number(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Input => 2,
            ExitStatus::Timeout => 124,
            ExitStatus::Signal(n) => u8::try_from(128 + n.clamp(0, 127)).unwrap_or(255),
        }
    }

    /// Reports a clap error (usage, or `--help`/`--version` which succeed).
    pub fn from_clap(err: clap::Error, bin: &str) -> ExitStatus {
        use clap::error::ErrorKind;
        match err.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                // Help and version are the only human text on stdout.
                let _ = err.print();
                ExitStatus::Success
            }
            _ => {
                let rendered = err.render().to_string();
                let first = rendered
                    .lines()
                    .next()
                    .unwrap_or("invalid usage")
                    .trim_start_matches("error: ");
                error_line(bin, first, Some(&format!("Try `{bin} --help`")));
                ExitStatus::Input
            }
        }
    }
}
