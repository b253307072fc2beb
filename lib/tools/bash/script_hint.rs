//! A script of the working directory run the way a command is: `build.sh`
//! (bash looks for it on PATH: 127, command not found) or `./build.sh`
//! without its executable bit (126, Permission denied). bash's message
//! names neither cause, and a model was seen running `build.sh` again and
//! again after a `chmod`. The note says what the file is and how to run it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The note for a command that exited with `code` in `cwd`, when its first
/// word names a file there that the shell could not run as written.
pub fn note(command: &str, cwd: &Path, code: i32) -> Option<String> {
    let word = command.split_whitespace().next()?;
    // A word with quotes, variables or globs is not looked up as a file.
    if word.chars().any(|c| "'\"$`*?[]{}()<>|&;=\\".contains(c)) {
        return None;
    }
    match code {
        127 if !word.contains('/') => {
            let meta = std::fs::metadata(cwd.join(word)).ok()?;
            if !meta.is_file() {
                return None;
            }
            let run = if meta.permissions().mode() & 0o111 != 0 {
                format!("`./{word}`")
            } else {
                format!(
                    "`bash {word}` (it is not executable; `chmod +x {word}` makes it so, then `./{word}`)"
                )
            };
            Some(format!(
                "`{word}` is a file in this directory, not a command on PATH: the shell looks for a bare name on PATH only. Run it as {run}."
            ))
        }
        126 => {
            let meta = std::fs::metadata(cwd.join(word)).ok()?;
            if !meta.is_file() || meta.permissions().mode() & 0o111 != 0 {
                return None;
            }
            let name = word.strip_prefix("./").unwrap_or(word);
            Some(format!(
                "`{name}` is not executable (mode {:o}): `chmod +x {name}` makes it so; `bash {name}` runs it as it is.",
                meta.permissions().mode() & 0o777
            ))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_run_as_a_command_or_without_its_bit_is_named_with_the_way_to_run_it() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("build.sh");
        std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
        let said = note("./build.sh --fast", dir.path(), 126).unwrap();
        assert_eq!(
            said,
            "`build.sh` is not executable (mode 644): `chmod +x build.sh` makes it so; `bash build.sh` runs it as it is."
        );
        let said = note("build.sh", dir.path(), 127).unwrap();
        assert!(
            said.contains("Run it as `bash build.sh` (it is not executable"),
            "{said}"
        );
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let said = note("build.sh", dir.path(), 127).unwrap();
        assert!(said.ends_with("Run it as `./build.sh`."), "{said}");
        // Executable already, another exit code, a command that is no file
        // here, or a word the shell expands: nothing to say.
        assert_eq!(note("./build.sh", dir.path(), 126), None);
        assert_eq!(note("build.sh", dir.path(), 1), None);
        assert_eq!(note("nosuch --help", dir.path(), 127), None);
        assert_eq!(note("$TOOL build.sh", dir.path(), 127), None);
    }
}
