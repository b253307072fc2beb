//! ag-patch across several large files, killed with SIGKILL at random
//! moments: after `ag-patch --recover`, every file is old or every file is
//! new, never a mix, and no hidden file or journal is left.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::bin;
use crate::util::{Env, run};

const FILES: usize = 6;

/// Megabytes per file. The debug build that the suite runs is slow on large
/// files, so the default is 8; `AG_TEST_PATCH_KILL_MB=40` runs the full
/// attack the issue describes.
fn file_mb() -> usize {
    std::env::var("AG_TEST_PATCH_KILL_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8)
}

/// A scratch directory in memory when the system has one (the test writes
/// hundreds of megabytes), else a plain temporary directory.
fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    if shm.is_dir()
        && let Ok(d) = tempfile::tempdir_in(shm)
    {
        return d;
    }
    tempfile::tempdir().unwrap()
}

/// The patch that turns every file from version `from` to version `to`.
fn patch(from: &str, to: &str) -> String {
    let mut p = String::from("*** Begin Patch\n");
    for k in 0..FILES {
        p.push_str(&format!(
            "*** Update File: f{k}.txt\n@@\n-VERSION {from} {k}\n+VERSION {to} {k}\n"
        ));
    }
    p.push_str("*** End Patch\n");
    p
}

/// The version each file's first line names.
fn versions(dir: &Path) -> Vec<String> {
    (0..FILES)
        .map(|k| {
            let mut head = [0u8; 64];
            let n = std::io::Read::read(
                &mut std::fs::File::open(dir.join(format!("f{k}.txt"))).unwrap(),
                &mut head,
            )
            .unwrap();
            let line = String::from_utf8_lossy(&head[..n]);
            line.split_whitespace().nth(1).unwrap_or("").to_string()
        })
        .collect()
}

/// Names in `dir` other than the files themselves: hidden staged files,
/// journals.
fn litter(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            !(n.starts_with('f') && n.ends_with(".txt"))
        })
        .collect()
}

/// A small random generator, seeded from the clock (the seed is printed
/// with any failure).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn sigkill_at_any_moment_leaves_all_old_or_all_new() {
    let env = Env::new();
    let scratch = scratch();
    let dir = scratch.path();
    let line = format!("{}\n", "x".repeat(999));
    let filler = line.repeat(file_mb() * 1000);
    for k in 0..FILES {
        std::fs::write(
            dir.join(format!("f{k}.txt")),
            format!("VERSION old {k}\n{filler}"),
        )
        .unwrap();
    }
    drop(filler);
    let patch_cmd = |from: &str, to: &str| {
        let mut c = env.cmd(bin!("ag-patch"));
        c.current_dir(dir).args(["--patch", &patch(from, to)]);
        c
    };
    // One run to the end, to learn how long a run takes.
    let started = Instant::now();
    run(patch_cmd("old", "new"), None).ok();
    let whole = started.elapsed();
    assert_eq!(versions(dir), vec!["new"; FILES]);

    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut rng = Rng(seed);
    let mut state = "new";
    let (mut done, mut undone) = (0, 0);
    for round in 0..15 {
        let to = if state == "new" { "old" } else { "new" };
        // Anywhere from early in the run (reading, placing hunks) to its
        // end (staging, renaming); a kill after the end changes nothing.
        let ms = whole.as_millis() as u64;
        let delay = Duration::from_millis(ms / 10 + rng.next() % (ms * 4 / 5 + 1));
        let mut cmd = patch_cmd(state, to);
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn().unwrap();
        if round % 2 == 0 {
            std::thread::sleep(delay);
        } else {
            // Wait for the first trace of writing (a hidden file, the
            // journal, a file changed), then kill within a few
            // milliseconds: the moments where a mix could arise.
            let limit = Instant::now() + whole * 3;
            while litter(dir).is_empty()
                && versions(dir).iter().all(|v| v == state)
                && Instant::now() < limit
                && child.try_wait().unwrap().is_none()
            {
                std::thread::sleep(Duration::from_micros(200));
            }
            std::thread::sleep(Duration::from_micros(rng.next() % 20_000));
        }
        let _ = child.kill();
        let status = child.wait().unwrap();
        let r = run(
            {
                let mut c = env.cmd(bin!("ag-patch"));
                c.current_dir(dir).arg("--recover");
                c
            },
            None,
        );
        r.ok();
        let now = versions(dir);
        assert!(
            now.iter().all(|v| v == &now[0]),
            "round {round} (seed {seed}, kill after {delay:?}, {status}): a mix of versions {now:?}\n{r}"
        );
        let left = litter(dir);
        assert!(
            left.is_empty(),
            "round {round} (seed {seed}): left behind {left:?}"
        );
        if now[0] == to {
            done += 1;
        } else {
            assert_eq!(now[0], state, "round {round}: {now:?}");
            undone += 1;
        }
        state = if now[0] == "new" { "new" } else { "old" };
    }
    eprintln!("patch_kill: {done} rounds ended patched, {undone} as before (seed {seed})");
}
