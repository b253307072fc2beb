//! The POSIX shell scripts ag-loop runs in a workspace: the wrapper around
//! one tool call (which ends the tool when the connection goes), the probe
//! at start (directory, architecture, libc, installed tools, project
//! instruction files) and the atomic install of one binary.
//!
//! The wrapper exists because a transport without a terminal does not
//! signal the remote side when the local end goes: ssh sends no SIGHUP to a
//! session without a tty, and `docker exec` leaves its process running. So
//! the call line is read first, the tool gets it on a stdin of its own, and
//! the wrapper's own stdin stays open (ag-loop holds its end) until the
//! call is over. End of input before the tool has exited means the caller
//! or the connection is gone: the tool gets SIGTERM (ag-bash then ends its
//! command's whole process group), SIGKILL after a grace period.

use super::uri::quote;

/// Exit status of the wrapper when the working directory is missing.
pub const NO_DIR: i32 = 97;
/// Exit status of the wrapper when no call line arrived.
pub const NO_CALL: i32 = 98;

/// Seconds between SIGTERM and SIGKILL for a tool whose caller went away.
const GRACE_SECS: u32 = 3;

/// The wrapper for one call of the tool at `binary` in `dir`, with `env`.
pub fn call(dir: &str, binary: &str, env: &[(String, String)]) -> String {
    let mut s = enter(dir);
    for (k, v) in env {
        // Names come from ag-loop itself; a strange one is left out rather
        // than spliced into the script.
        if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            s.push_str(&format!("{k}={}; export {k}\n", quote(v)));
        }
    }
    s.push_str(&format!(
        r#"exec 3<&0
IFS= read -r ag_call || exit {NO_CALL}
{binary} 3<&- <<AG_CALL_END &
$ag_call
AG_CALL_END
ag_tool=$!
(
  while IFS= read -r ag_more <&3; do :; done
  kill -TERM $ag_tool 2>/dev/null || exit 0
  sleep {GRACE_SECS}
  kill -KILL $ag_tool 2>/dev/null
) </dev/null >/dev/null 2>&1 &
ag_watch=$!
exec 3<&-
wait $ag_tool
ag_status=$?
kill $ag_watch 2>/dev/null
exit $ag_status
"#,
        binary = quote(binary),
    ));
    s
}

/// Enters the working directory, or says which is missing.
fn enter(dir: &str) -> String {
    format!(
        "cd {q} 2>/dev/null || {{ echo \"the workspace directory \"{q}\" does not exist or cannot be entered\" >&2; exit {NO_DIR}; }}\n",
        q = quote(dir)
    )
}

/// The probe at start: `key=value` lines for the real working directory,
/// the machine, the C library, `$HOME`, then for each tool where it is
/// found on `PATH` and in the version's cache, with its `--version`, then
/// the project instruction files (`file=PATH`), from the working directory
/// up to the repository root.
pub fn probe(dir: &str, tools: &[String], version: &str) -> String {
    let mut s = enter(dir);
    s.push_str(&format!(
        r#"echo "pwd=$(pwd -P)"
echo "arch=$(uname -m)"
echo "libc=$(getconf GNU_LIBC_VERSION 2>/dev/null)"
echo "home=$HOME"
ag_cache="$HOME/.cache/ag/"{v}
for t in {tools}; do
  p=$(command -v "$t" 2>/dev/null) && echo "path.$t=$p" && echo "path_version.$t=$("$p" --version 2>/dev/null | head -n 1)"
  [ -x "$ag_cache/$t" ] && echo "cache.$t=$ag_cache/$t" && echo "cache_version.$t=$("$ag_cache/$t" --version 2>/dev/null | head -n 1)"
done
d=$(pwd -P 2>/dev/null)
case $d in /*) ;; *) d= ;; esac
while [ -n "$d" ]; do
  for f in AGENTS.md CLAUDE.md; do [ -f "$d/$f" ] && echo "file=$d/$f"; done
  [ -e "$d/.git" ] && echo "root=$d" && break
  [ "$d" = / ] && break
  d=$(dirname "$d")
done
exit 0
"#,
        v = quote(version),
        tools = tools.iter().map(|t| quote(t)).collect::<Vec<_>>().join(" "),
    ));
    s
}

/// Prints one file.
pub fn cat(path: &str) -> String {
    format!("cat -- {}\n", quote(path))
}

/// Writes stdin to `$HOME/.cache/ag/VERSION/NAME`: to a temporary name
/// first, made executable, then renamed, so that a dropped connection
/// never leaves half a binary under the real name. Prints the final path.
pub fn install(version: &str, name: &str) -> String {
    format!(
        r#"d="$HOME/.cache/ag/"{v}
mkdir -p "$d" || exit 1
t="$d/."{n}".tmp.$$"
trap 'rm -f "$t"' EXIT
cat > "$t" && chmod 755 "$t" && mv -f "$t" "$d/"{n} || exit 1
trap - EXIT
echo "$d/"{n}
"#,
        v = quote(version),
        n = quote(name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a script with `sh -c`, stdin given and then, with `hold`, held
    /// open until it has exited, as ag-loop holds it for a call.
    fn sh(script: &str, stdin: &str, hold: bool) -> std::process::Output {
        use std::io::Write;
        let mut child = std::process::Command::new("sh")
            .args(["-c", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        // A script that ends before reading (a missing directory) closes it.
        let _ = input.write_all(stdin.as_bytes());
        if !hold {
            drop(input);
            return child.wait_with_output().unwrap();
        }
        let out = child.wait_with_output().unwrap();
        drop(input);
        out
    }

    /// An executable shell script standing in for a tool, in a directory
    /// that lives as long as the first value.
    fn tool_script(body: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("tool");
        std::fs::write(&tool, body).unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, tool)
    }

    #[test]
    fn the_end_of_input_during_the_call_ends_the_tool() {
        let (_dir, tool) = tool_script("#!/bin/sh\nread l\nexec sleep 1000\n");
        let script = call("/", &tool.display().to_string(), &[]);
        // Stdin closes right after the call line: the caller is gone.
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("printf '{{}}\\n' | sh -c {}", quote(&script)),
            ])
            .output()
            .unwrap();
        // SIGTERM ended the tool, and the wrapper reports it so.
        assert_eq!(out.status.code(), Some(128 + 15), "{out:?}");
    }

    #[test]
    fn the_call_line_reaches_the_tool_unexpanded_with_its_environment() {
        let (dir, tool) = tool_script("#!/bin/sh\ncat; echo \"$AG_X|$(pwd -P)\"\n");
        let env = [
            ("AG_X".to_string(), "it's".to_string()),
            ("BAD NAME".to_string(), "x".to_string()),
        ];
        let line = r#"{"a":"$HOME `id` \\n '\"' $(x)"}"#;
        let script = call(
            &dir.path().display().to_string(),
            &tool.display().to_string(),
            &env,
        );
        let out = sh(&script, &format!("{line}\n"), true);
        let real = dir.path().canonicalize().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{line}\nit's|{}\n", real.display()),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success());
    }

    #[test]
    fn a_missing_directory_and_no_call_have_their_own_status() {
        let out = sh(&call("/nonexistent/ag-ws", "true", &[]), "{}\n", true);
        assert_eq!(out.status.code(), Some(NO_DIR));
        assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/ag-ws"));
        let out = sh(&call("/", "true", &[]), "", false);
        assert_eq!(out.status.code(), Some(NO_CALL));
    }

    /// A directory removed between the `cd` and the walk up (`pwd -P`
    /// then fails): the walk must end, not climb `dirname .` for ever as
    /// an orphan once the connection is gone.
    #[test]
    fn the_probe_ends_when_its_directory_is_removed_under_it() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let script = probe(&gone.display().to_string(), &[], "0.1.0");
        let (enter, rest) = script.split_once('\n').unwrap();
        // `timeout` only guards against a hang, it times nothing.
        let script = format!("{enter}\nrmdir \"$PWD\"\n{rest}");
        let out = std::process::Command::new("timeout")
            .args(["60", "sh", "-c", &script])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains("root=") && !text.contains("file="), "{text}");
    }

    #[test]
    fn install_writes_under_the_version_and_renames() {
        let home = tempfile::tempdir().unwrap();
        let script = format!(
            "HOME={}; export HOME\n{}",
            quote(&home.path().display().to_string()),
            install("1.2.3", "ag-x")
        );
        let out = sh(&script, "#!/bin/sh\necho hi\n", false);
        let want = home.path().join(".cache/ag/1.2.3/ag-x");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            want.display().to_string()
        );
        let listed: Vec<_> = std::fs::read_dir(want.parent().unwrap())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(listed, ["ag-x"], "no temporary file is left");
        let ran = std::process::Command::new(&want).output().unwrap();
        assert_eq!(ran.stdout, b"hi\n");
    }
}
