//! A generated project tree for the search tools: a git repository with a
//! .gitignore and an .ignore, hidden files, a binary file, symlinks (to a
//! file, a loop, one leading out of the tree) and unicode names. Every
//! text file that should be found holds the word `needle`.

use crate::util::Env;

/// Builds the tree in `env` and returns it. The layout:
///
/// ```text
/// .git/config              needle (never searched: git's data)
/// .gitignore               target/ *.log /build
/// .ignore                  vendor/
/// .env                     needle (hidden)
/// .hidden/secret.rs        needle (hidden)
/// app.log                  needle (ignored)
/// build/out.txt            needle (ignored, anchored)
/// target/debug/gen.rs      needle (ignored)
/// vendor/dep.rs            needle (ignored by .ignore)
/// assets/logo.bin          needle before a NUL (binary)
/// docs/naïve café.md       needle, Needle
/// docs/日本語.txt           needle
/// src/main.rs              needle twice
/// src/lib.rs               no match
/// src/util/strings.rs      needle
/// src/util/build/keep.rs   needle (`/build` is anchored: not ignored)
/// link_main.rs -> src/main.rs
/// loop -> .
/// escape -> a directory outside the tree, holding far.rs with needle
/// ```
///
/// The returned directory is the outside one; keep it alive while testing.
pub fn project(env: &Env) -> tempfile::TempDir {
    env.write(".git/config", "[core]\n\tneedle = 1\n");
    env.write(".gitignore", "target/\n*.log\n/build\n");
    env.write(".ignore", "vendor/\n");
    env.write(".env", "SECRET=needle\n");
    env.write(".hidden/secret.rs", "// needle\n");
    env.write("app.log", "needle in a log\n");
    env.write("build/out.txt", "needle built\n");
    env.write("target/debug/gen.rs", "// needle generated\n");
    env.write("vendor/dep.rs", "// needle vendored\n");
    env.write("assets/logo.bin", b"PNGneedle\x00\x01\x02\x03");
    env.write("docs/naïve café.md", "# Café\nthe needle\nNeedle upper\n");
    env.write("docs/日本語.txt", "針 needle 針\n");
    env.write(
        "src/main.rs",
        "fn main() {\n    let needle = 1;\n    println!(\"{}\", needle);\n}\n",
    );
    env.write("src/lib.rs", "pub mod util;\n");
    env.write("src/util/strings.rs", "pub fn needle() {}\n");
    env.write("src/util/build/keep.rs", "// needle kept\n");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("far.rs"), "needle far away\n").unwrap();
    symlink("src/main.rs", env, "link_main.rs");
    symlink(".", env, "loop");
    symlink(outside.path().to_str().unwrap(), env, "escape");
    outside
}

fn symlink(target: &str, env: &Env, name: &str) {
    std::os::unix::fs::symlink(target, env.join(name)).unwrap();
}

/// A plain directory, not a git repository, whose `.gitignore` files the
/// search tools obey all the same. Every file holds `needle`.
///
/// ```text
/// .gitignore           build/ *.log
/// debug.log            (ignored)
/// build/out.txt        (ignored)
/// src/a.txt
/// sub/.gitignore       secret.txt
/// sub/secret.txt       (ignored by sub/.gitignore)
/// sub/build/x.txt      (ignored by the parent's .gitignore)
/// sub/kept.txt
/// ```
pub fn plain_project(env: &Env) {
    env.write(".gitignore", "build/\n*.log\n");
    env.write("debug.log", "needle\n");
    env.write("build/out.txt", "needle\n");
    env.write("src/a.txt", "needle\n");
    env.write("sub/.gitignore", "secret.txt\n");
    env.write("sub/secret.txt", "needle\n");
    env.write("sub/build/x.txt", "needle\n");
    env.write("sub/kept.txt", "needle\n");
    assert!(
        !env.path().ancestors().any(|d| d.join(".git").exists()),
        "the temporary directory is inside a git repository"
    );
}

/// A git repository in `repo/` below a plain directory whose `.gitignore`
/// says `*.log`: inside the repository, as for git, it does not count.
pub fn repository_below_a_gitignore(env: &Env) {
    env.write(".gitignore", "*.log\n");
    env.write("repo/.git/HEAD", "ref: refs/heads/main\n");
    env.write("repo/notes.log", "needle\n");
    env.write("repo/.gitignore", "skip.txt\n");
    env.write("repo/skip.txt", "needle\n");
}
