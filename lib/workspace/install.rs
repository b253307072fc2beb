//! What the workspace has and what it gets at start: one probe (the real
//! working directory, machine, C library, the ag tools on `PATH` and in
//! `~/.cache/ag/<version>/`, the project instruction files), then, for
//! tools missing or of another version, a copy of this ag-loop's own
//! sibling binaries into the cache when the machine and the C library
//! allow them to run there, else an error saying what to install.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{Workspace, WorkspaceError, fail, script};
use crate::proc::Input;
use crate::tool_protocol::exec::find_tool_binary;

/// The version the tools must report (`ag-read 0.1.0`).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What the probe printed: `key=value` lines, and the project files.
#[derive(Debug, Default, PartialEq)]
pub struct Probe {
    values: BTreeMap<String, String>,
    files: Vec<String>,
}

impl Probe {
    /// Reads the probe's output.
    pub fn parse(text: &str) -> Probe {
        let mut p = Probe::default();
        for line in text.lines() {
            if let Some((k, v)) = line.split_once('=') {
                if k == "file" {
                    p.files.push(v.to_string());
                } else {
                    p.values.insert(k.to_string(), v.to_string());
                }
            }
        }
        p
    }

    /// The instruction files that count, outermost first: from the working
    /// directory up to the repository root, or only the directory's own
    /// outside a repository (as for a local run).
    pub fn project_files(&self) -> Vec<String> {
        let pwd = self.get("pwd").unwrap_or("");
        let in_repo = self.get("root").is_some();
        let parent = |f: &str| f.rsplit_once('/').map(|(d, _)| d.to_string());
        let mut files: Vec<&String> = self
            .files
            .iter()
            .filter(|f| in_repo || parent(f).as_deref() == Some(pwd))
            .collect();
        // Printed innermost first; stable, so AGENTS.md stays before CLAUDE.md.
        files.sort_by_key(|f| f.matches('/').count());
        files.into_iter().cloned().collect()
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.values
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// Where `binary` of this version is, on `PATH` first, else in the cache.
    pub fn found(&self, binary: &str) -> Option<&str> {
        let want = format!("{binary} {VERSION}");
        ["path", "cache"].into_iter().find_map(|place| {
            let version = self.get(&format!("{place}_version.{binary}"))?;
            (version.trim() == want)
                .then(|| self.get(&format!("{place}.{binary}")))
                .flatten()
        })
    }
}

/// Fills in `ws`: its real directory, the remote binaries (copied where
/// needed) and the project files.
pub(super) async fn prepare(ws: &mut Workspace, tools: &[String]) -> Result<(), WorkspaceError> {
    let dir = ws.cwd.display().to_string();
    let probe_script = script::probe(&dir, tools, VERSION);
    let mut probe = Probe::parse(&ws.step("look at it", &probe_script, Input::Null).await?);
    let missing: Vec<&String> = tools.iter().filter(|t| probe.found(t).is_none()).collect();
    if !missing.is_empty() {
        let mut local = Vec::new();
        for binary in &missing {
            local.push((binary.as_str(), read_local(ws, binary)?));
        }
        check_compatible(ws, &probe, &local)?;
        let mut bytes = 0u64;
        for (binary, content) in local {
            bytes += content.len() as u64;
            ws.step(
                &format!("copy `{binary}` there"),
                &script::install(VERSION, binary),
                Input::Bytes(content),
            )
            .await?;
        }
        let names: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        ws.notes.push(format!(
            "workspace: copied {} ({} MB) to ~/.cache/ag/{VERSION}/ on {}, where they were missing or of another version",
            names.join(", "),
            bytes.div_ceil(1024 * 1024),
            ws.uri.describe()
        ));
        probe = Probe::parse(
            &ws.step("look at it again", &probe_script, Input::Null)
                .await?,
        );
    }
    for binary in tools {
        let Some(path) = probe.found(binary) else {
            return Err(fail(
                &ws.uri,
                format!("`{binary}` does not run there after it was copied"),
            ));
        };
        ws.bins.insert(binary.clone(), path.to_string());
    }
    if let Some(pwd) = probe.get("pwd") {
        ws.cwd = PathBuf::from(pwd);
    }
    for file in probe.project_files() {
        let text = ws
            .step(&format!("read `{file}`"), &script::cat(&file), Input::Null)
            .await?;
        ws.project_files.push((PathBuf::from(&file), text));
    }
    Ok(())
}

/// The binaries can run there: the same machine, and a glibc at least as
/// new as the newest symbol version they ask for (none for a static
/// build); else an error saying what to install.
fn check_compatible(
    ws: &Workspace,
    probe: &Probe,
    local: &[(&str, Vec<u8>)],
) -> Result<(), WorkspaceError> {
    let install = || {
        format!(
            "install the ag {VERSION} tools ({}) on the PATH there, or put them in ~/.cache/ag/{VERSION}/",
            local.iter().map(|(b, _)| *b).collect::<Vec<_>>().join(", ")
        )
    };
    let remote_arch = probe.get("arch").map(normal_arch).unwrap_or("unknown");
    let here = std::env::consts::ARCH;
    if remote_arch != here {
        return Err(fail(
            &ws.uri,
            format!(
                "the ag tools are missing there, and this ag-loop's cannot be copied: the machine is {remote_arch}, not {here}\nhint: {}",
                install()
            ),
        ));
    }
    let Some(floor) = local.iter().filter_map(|(_, b)| glibc_floor(b)).max() else {
        return Ok(());
    };
    match probe.get("libc").and_then(glibc_version) {
        Some(remote) if remote >= floor => Ok(()),
        other => Err(fail(
            &ws.uri,
            format!(
                "the ag tools are missing there, and this ag-loop's cannot be copied: they need glibc {}.{} or newer, and the C library there is {}\nhint: {}",
                floor.0,
                floor.1,
                match other {
                    Some(v) => format!("glibc {}.{}", v.0, v.1),
                    None => "not glibc".into(),
                },
                install()
            ),
        )),
    }
}

/// This ag-loop's own `binary`, to copy.
fn read_local(ws: &Workspace, binary: &str) -> Result<Vec<u8>, WorkspaceError> {
    let local = binary
        .strip_prefix("ag-")
        .and_then(find_tool_binary)
        .ok_or_else(|| {
            fail(
                &ws.uri,
                format!("`{binary}` is not installed here either, so it cannot be copied"),
            )
        })?;
    std::fs::read(&local).map_err(|e| {
        fail(
            &ws.uri,
            format!("cannot read `{}` to copy it: {e}", local.display()),
        )
    })
}

/// The newest glibc symbol version a dynamically linked binary asks for
/// (its `GLIBC_2.N` version names), `None` for one that names none (a
/// static build).
pub fn glibc_floor(binary: &[u8]) -> Option<(u32, u32)> {
    const TAG: &[u8] = b"GLIBC_";
    let mut best = None;
    let mut i = 0;
    while let Some(at) = binary[i..].windows(TAG.len()).position(|w| w == TAG) {
        let start = i + at + TAG.len();
        let digits: Vec<u8> = binary[start..]
            .iter()
            .take(12)
            .take_while(|b| b.is_ascii_digit() || **b == b'.')
            .copied()
            .collect();
        let text = format!("glibc {}", String::from_utf8_lossy(&digits));
        if let Some(v) = glibc_version(&text) {
            best = best.max(Some(v));
        }
        i = start;
    }
    best
}

/// `uname -m` in Rust's words.
fn normal_arch(m: &str) -> &str {
    match m.trim() {
        "arm64" => "aarch64",
        "amd64" => "x86_64",
        "i686" | "i386" => "x86",
        other => other,
    }
}

/// `glibc 2.36` as (2, 36).
pub fn glibc_version(text: &str) -> Option<(u32, u32)> {
    let v = text.trim().strip_prefix("glibc ")?;
    let mut parts = v.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts
        .next()
        .and_then(|m| {
            m.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .unwrap_or(0);
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_finds_the_right_version_on_path_first_then_in_the_cache() {
        let text = format!(
            "pwd=/w\narch=x86_64\nlibc=glibc 2.31\nhome=/h\npath.ag-read=/usr/bin/ag-read\npath_version.ag-read=ag-read 0.0.1\ncache.ag-read=/h/.cache/ag/{VERSION}/ag-read\ncache_version.ag-read=ag-read {VERSION}\npath.ag-bash=/bin/ag-bash\npath_version.ag-bash=ag-bash {VERSION}\nfile=/w/AGENTS.md\nfile=/w/a=b/CLAUDE.md\n"
        );
        let p = Probe::parse(&text);
        assert_eq!(
            p.found("ag-read"),
            Some(format!("/h/.cache/ag/{VERSION}/ag-read").as_str())
        );
        assert_eq!(p.found("ag-bash"), Some("/bin/ag-bash"));
        assert_eq!(p.found("ag-edit"), None);
        assert_eq!(p.files, ["/w/AGENTS.md", "/w/a=b/CLAUDE.md"]);
        // Outside a repository only the directory's own file counts.
        assert_eq!(p.project_files(), ["/w/AGENTS.md"]);
        let p = Probe::parse(
            "pwd=/r/s\nfile=/r/s/AGENTS.md\nfile=/r/s/CLAUDE.md\nfile=/r/AGENTS.md\nroot=/r\n",
        );
        assert_eq!(
            p.project_files(),
            ["/r/AGENTS.md", "/r/s/AGENTS.md", "/r/s/CLAUDE.md"]
        );
        // A binary that prints no version (or cannot run) is not found.
        let p = Probe::parse("path.ag-read=/x\npath_version.ag-read=\n");
        assert_eq!(p.found("ag-read"), None);
    }

    #[test]
    fn glibc_versions_and_machines() {
        assert_eq!(glibc_version("glibc 2.36\n"), Some((2, 36)));
        assert_eq!(glibc_version("glibc 2.17"), Some((2, 17)));
        assert_eq!(glibc_version(""), None);
        assert_eq!(glibc_version("musl 1.2"), None);
        assert!((2, 31) < (2, 36) && (3, 0) > (2, 36));
        assert_eq!(normal_arch("arm64\n"), "aarch64");
        assert_eq!(normal_arch("x86_64"), "x86_64");
    }

    #[test]
    fn the_glibc_floor_is_the_newest_version_named() {
        let bin = b"\x7fELF..GLIBC_2.2.5\0GLIBC_2.34\0GLIBC_2.17\0GLIBC_PRIVATE\0";
        assert_eq!(glibc_floor(bin), Some((2, 34)));
        assert_eq!(glibc_floor(b"\x7fELF static"), None);
        // The binaries built here.
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        let here = glibc_floor(&me);
        if cfg!(target_env = "gnu") {
            assert!(here.is_some_and(|v| v >= (2, 2)), "{here:?}");
        }
    }
}
