//! What a cloned repository brings for ag-loop to read before any tool
//! runs (AGENTS.md and CLAUDE.md, `.ag/agents/default.md`, a skill's
//! SKILL.md, MEMORY.md) is read as a hostile repository would have it: each
//! a link to `/proc/self/pagemap`, to `/dev/zero` or to a file of the
//! person's outside the repository, a FIFO, or simply huge. ag-loop starts,
//! says on stderr what it did not read or cut, and stays small (its peak
//! memory is read by the scripted model when the request reaches it). And
//! `ag-loop --check` there reports the tools a run would offer.

use std::path::Path;

use serde_json::Value;

use crate::agent::text_turn;
use crate::attachments::{measured_model, peak_mib};
use crate::bin;
use crate::util::{Env, run, run_args};

/// What a hostile repository puts where ag-loop reads.
#[derive(Debug, Clone, Copy)]
enum Hostile {
    /// A link to `/proc/self/pagemap`, which reads without end (1 GiB in
    /// two seconds before).
    Pagemap,
    /// A link to `/dev/zero`.
    DevZero,
    /// A FIFO in the repository: a read waits for a writer forever.
    Fifo,
    /// A link to a file of the person's, outside the repository.
    Outside,
    /// A regular file of 64 MiB.
    Huge,
}

/// The secret in the person's file that [`Hostile::Outside`] links to.
const SECRET: &str = "the person's private notes";

/// The files a repository brings that ag-loop reads at start, relative
/// to the repository, each with the front matter it needs to count.
const PLANTED: &[(&str, &str)] = &[
    ("AGENTS.md", ""),
    (".ag/agents/default.md", "---\nname: planted\n---\n"),
    (
        ".agents/skills/planted/SKILL.md",
        "---\nname: planted\ndescription: A skill from the repository.\n---\n",
    ),
];

fn plant(env: &Env, rel: &str, head: &str, how: Hostile, outside: &Path) {
    let path = env.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    match how {
        Hostile::Pagemap => std::os::unix::fs::symlink("/proc/self/pagemap", &path).unwrap(),
        Hostile::DevZero => std::os::unix::fs::symlink("/dev/zero", &path).unwrap(),
        Hostile::Outside => std::os::unix::fs::symlink(outside, &path).unwrap(),
        Hostile::Fifo => {
            let made = std::process::Command::new("mkfifo")
                .arg(&path)
                .status()
                .unwrap();
            assert!(made.success());
        }
        Hostile::Huge => {
            use std::io::Write;
            let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
            f.write_all(head.as_bytes()).unwrap();
            let line = "Always answer in the voice of a pirate, at length.\n";
            for _ in 0..(64 << 20) / line.len() {
                f.write_all(line.as_bytes()).unwrap();
            }
        }
    }
}

/// A repository (a `.git` directory) with every planted file made `how`.
fn hostile_repository(how: Hostile) -> (Env, tempfile::TempDir) {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    let person = tempfile::tempdir().unwrap();
    let outside = person.path().join("notes.md");
    std::fs::write(&outside, SECRET).unwrap();
    for (rel, head) in PLANTED {
        plant(&env, rel, head, how, &outside);
    }
    (env, person)
}

/// The system prompt of a request as `--llm-cmd` gets it.
fn system_of(request: &Value) -> String {
    request["system"].as_str().unwrap_or_default().to_string()
}

#[test]
fn a_hostile_repository_cannot_make_ag_loop_read_what_is_not_its_own() {
    for how in [
        Hostile::Pagemap,
        Hostile::DevZero,
        Hostile::Fifo,
        Hostile::Outside,
        Hostile::Huge,
    ] {
        let (env, _person) = hostile_repository(how);
        let model = measured_model(&env, &[text_turn("ahoy")]);
        let mut c = env.cmd(bin!("ag-loop"));
        c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "hi"]);
        let r = run(c, None);
        r.ok();
        let err = r.stderr();
        for (rel, _) in PLANTED {
            let path = env.join(rel);
            let says = match how {
                Hostile::Pagemap | Hostile::DevZero | Hostile::Outside => format!(
                    "ag-loop: warning: `{}` is not read: it leads outside `{}` (through a symlink or `..`); a project's files are read only from inside it: put the text itself there",
                    path.display(),
                    env.path().display()
                ),
                Hostile::Fifo => format!(
                    "ag-loop: warning: `{}` is not read: it is a FIFO, not a regular file; make it a regular file that holds the text",
                    path.display()
                ),
                Hostile::Huge => format!(
                    "ag-loop: warning: `{}` is 64.0 MiB; only its first 256 KiB is read (ag reads at most that much of an AGENTS.md, MEMORY.md, identity or SKILL.md): shorten it",
                    path.display()
                ),
            };
            assert!(err.contains(&says), "{how:?}: {says}\n{r}");
            // Said once, though identities and skills are looked up more
            // than once.
            assert_eq!(err.matches(&says).count(), 1, "{how:?}\n{r}");
        }
        let request = std::fs::read_to_string(env.join(".model/request0.json")).unwrap();
        assert!(!request.contains(SECRET), "{how:?}");
        let system = system_of(&serde_json::from_str(&request).unwrap());
        match how {
            Hostile::Huge => {
                // The identity, cut, heads the prompt; AGENTS.md follows,
                // cut too; the skill is listed from its front matter.
                assert!(system.starts_with("Always answer in the voice of a pirate"));
                assert!(system.len() > 2 * 200_000 && system.len() < 3 * 256 * 1024);
                assert!(system.contains("- planted: A skill from the repository."));
            }
            _ => {
                assert!(system.starts_with("You are a coding agent"), "{how:?}");
                assert!(!system.contains("planted"), "{how:?}");
            }
        }
        let peak = peak_mib(&env, 0);
        assert!(peak < 128, "{how:?}: ag-loop reached {peak} MiB");
    }
}

#[test]
fn the_persons_own_files_follow_their_links_but_only_to_regular_files() {
    let env = Env::new();
    std::fs::create_dir_all(env.join(".git")).unwrap();
    std::fs::create_dir_all(env.join(".home/.ag")).unwrap();
    let dotfiles = tempfile::tempdir().unwrap();
    std::fs::write(dotfiles.path().join("memory.md"), "Prefers tabs.").unwrap();
    // $AG_HOME/MEMORY.md is the person's: a link anywhere is followed.
    std::os::unix::fs::symlink(
        dotfiles.path().join("memory.md"),
        env.join(".home/.ag/MEMORY.md"),
    )
    .unwrap();
    // But not into the kernel's files.
    std::fs::create_dir_all(env.join(".home/.ag/agents")).unwrap();
    std::os::unix::fs::symlink(
        "/proc/self/pagemap",
        env.join(".home/.ag/agents/default.md"),
    )
    .unwrap();
    // A link inside the repository is followed.
    env.write("docs/rules.md", "Run make check.");
    std::os::unix::fs::symlink("docs/rules.md", env.join("CLAUDE.md")).unwrap();
    let model = measured_model(&env, &[text_turn("ok")]);
    let mut c = env.cmd(bin!("ag-loop"));
    c.args(["--llm-cmd", &model, "--tools", "read", "--no-session", "hi"]);
    let r = run(c, None);
    r.ok();
    let request: Value = serde_json::from_slice(&env.read(".model/request0.json")).unwrap();
    let system = system_of(&request);
    assert!(system.contains("Prefers tabs."), "{system}");
    assert!(system.contains("Run make check."), "{system}");
    assert!(
        r.stderr().contains(&format!(
            "ag-loop: warning: `{}` is not read: it is a file of the kernel's proc file system, not a file that holds text; make it a regular file that holds the text",
            env.join(".home/.ag/agents/default.md").display()
        )),
        "{r}"
    );
    assert!(peak_mib(&env, 0) < 128);
}

#[test]
fn an_identity_asked_for_by_name_that_cannot_be_read_is_an_error() {
    let (env, _person) = hostile_repository(Hostile::Outside);
    std::os::unix::fs::symlink(
        env.join(".ag/agents/default.md"),
        env.join(".ag/agents/reviewer.md"),
    )
    .unwrap();
    let r = run_args(
        &env,
        bin!("ag-loop"),
        &[
            "--llm-cmd",
            "false",
            "--agent",
            "reviewer",
            "--no-session",
            "hi",
        ],
    );
    r.expect_code(2);
    assert!(
        r.stderr().contains(&format!(
            "cannot read `{}`: it leads outside `{}`",
            env.join(".ag/agents/reviewer.md").display(),
            env.path().display()
        )),
        "{r}"
    );
    assert!(!r.stderr().contains(SECRET), "{r}");
}

#[test]
fn check_in_a_hostile_repository_reports_the_tools_a_run_offers() {
    let (env, _person) = hostile_repository(Hostile::Pagemap);
    env.write("CLAUDE.md", "Run the tests with make test.\n");
    let mut c = env.cmd(bin!("ag-loop"));
    // The command answers nothing: --check does not ask it.
    c.args(["--check", "--llm-cmd", "false", "--tools", "minimal"]);
    let r = run(c, None);
    r.ok();
    let out = r.stdout();
    // Every tool of the set, the git tools and edit_lines (modes of ag-git
    // and ag-edit) too, as the run offers them.
    assert!(
        out.contains("  tools      17 found: read write edit edit_lines patch delete bash grep find ls todo git_status git_diff git_log git_commit notify ask; plus 0 --tool and 0 --mcp\n"),
        "{r}"
    );
    assert!(!out.contains("not found"), "{r}");
    // The instructions that would be read, and not the one that leads out.
    assert!(
        out.contains(&format!(
            "  AGENTS.md  {} (30 bytes)\n",
            env.join("CLAUDE.md").display()
        )),
        "{r}"
    );
    assert!(
        r.stderr().contains(&format!(
            "`{}` is not read",
            env.join("AGENTS.md").display()
        )),
        "{r}"
    );
    assert!(out.ends_with("a run here would work\n"), "{r}");
}
