//! The documentation's programs and commands work as written, on the simulated GPU.
//!
//! In README.md, docs/tutorial.md and docs/cufile.md, an HTML comment right above a code block
//! says what the test does with it:
//!
//! - `<!-- doctest: file NAME -->`: the block is written to the file NAME;
//! - `<!-- doctest: run -->` (optionally `<!-- doctest: run; expect: TEXT -->`): the shell block
//!   is run with `bash -euo pipefail`, and must succeed (and print TEXT);
//! - `<!-- doctest: skip: REASON -->`: the block is not run; REASON says why, and which test
//!   covers it instead.
//!
//! Every shell block of README.md and docs/tutorial.md must carry a marker, every C block there
//! must be a `file` that a `run` block uses, so nothing the front door and the tutorial show
//! goes untested by accident.
//!
//! The blocks of one page run in order, in a directory laid out as a user's would be: the
//! working directory stands for the repository root, with `target/release/` holding the
//! libraries built for the tests (`libhipfile.so`, `libcufile.so`, `libhipsim.so`), and `$HOME`
//! holds `$HOME/hipfile`, where `scripts/install.sh --libdir lib` installed the library, as the
//! pages tell the reader to. No variable of the library, the simulator or cuFile is inherited;
//! what a block exports stays exported for the blocks after it, as in the reader's shell.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{deps_dir, hipsim_path, libhipfile_path, repo_root};

#[derive(Debug, PartialEq)]
enum Marker {
    File(String),
    Run(Option<String>),
    Skip(String),
}

#[derive(Debug)]
struct Block {
    /// Line of the opening fence (1-based).
    line: usize,
    lang: String,
    text: String,
    marker: Option<Marker>,
}

fn parse_marker(line: &str) -> Option<Marker> {
    let inner = line
        .trim()
        .strip_prefix("<!-- doctest:")?
        .strip_suffix("-->")?
        .trim();
    if let Some(name) = inner.strip_prefix("file ") {
        return Some(Marker::File(name.trim().to_string()));
    }
    if let Some(reason) = inner.strip_prefix("skip:") {
        return Some(Marker::Skip(reason.trim().to_string()));
    }
    if inner == "run" {
        return Some(Marker::Run(None));
    }
    if let Some(expect) = inner.strip_prefix("run; expect:") {
        return Some(Marker::Run(Some(expect.trim().to_string())));
    }
    panic!("unknown doctest marker: {line}");
}

/// The fenced code blocks of a Markdown text, each with the marker on the line above it.
fn blocks(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i];
        if let Some(lang) = l.strip_prefix("```") {
            let start = i;
            let mut body = String::new();
            i += 1;
            while i < lines.len() && !lines[i].starts_with("```") {
                body.push_str(lines[i]);
                body.push('\n');
                i += 1;
            }
            assert!(i < lines.len(), "unclosed code block at line {}", start + 1);
            let marker = start.checked_sub(1).and_then(|p| parse_marker(lines[p]));
            out.push(Block {
                line: start + 1,
                lang: lang.trim().to_string(),
                text: body,
                marker,
            });
        } else if parse_marker(l).is_some()
            && !lines.get(i + 1).is_some_and(|n| n.starts_with("```"))
        {
            panic!(
                "line {}: a doctest marker must be right above a code block",
                i + 1
            );
        }
        i += 1;
    }
    out
}

/// The rules every shell and C block of the front door and the tutorial follows.
fn check_markers(page: &str, blocks: &[Block]) {
    let run_text: String = blocks
        .iter()
        .filter(|b| matches!(b.marker, Some(Marker::Run(_))))
        .map(|b| b.text.as_str())
        .collect();
    for b in blocks {
        match (b.lang.as_str(), &b.marker) {
            ("sh", None) => panic!(
                "{page}:{}: a shell block without a doctest marker (run, or skip with the reason)",
                b.line
            ),
            ("sh", Some(Marker::Skip(reason))) if reason.is_empty() => {
                panic!("{page}:{}: skip without a reason", b.line)
            }
            ("sh", Some(Marker::File(_))) => {
                panic!("{page}:{}: a shell block is run, not written", b.line)
            }
            ("c", Some(Marker::File(name))) => assert!(
                run_text.contains(name.as_str()),
                "{page}:{}: {name} is written but no run block uses it",
                b.line
            ),
            ("c", _) => panic!(
                "{page}:{}: a C block must be a `file` that a run block compiles",
                b.line
            ),
            _ => {}
        }
    }
}

/// A directory laid out like the reader's: `repo/` (the working directory) with
/// `target/release/` and `home/hipfile/` installed by scripts/install.sh.
fn sandbox(name: &str) -> (PathBuf, PathBuf) {
    let base = common::fresh_out_dir(&format!("docs-examples/{name}"));
    let repo = base.join("repo");
    let home = base.join("home");
    let release = repo.join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(base.join("tmp")).unwrap();
    let deps = deps_dir();
    for lib in ["libhipfile.so", "libcufile.so"] {
        std::os::unix::fs::symlink(deps.join(lib), release.join(lib)).unwrap();
    }
    std::os::unix::fs::symlink(hipsim_path(), release.join("libhipsim.so")).unwrap();
    let out = clean(Command::new("bash"), &home, &base)
        .arg(repo_root().join("scripts/install.sh"))
        .args([
            "--lib",
            libhipfile_path().to_str().unwrap(),
            "--libdir",
            "lib",
        ])
        .arg(home.join("hipfile"))
        .output()
        .expect("running scripts/install.sh");
    assert!(
        out.status.success(),
        "scripts/install.sh failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (repo, home)
}

/// `cmd` with none of cargo's or our variables, `HOME` and `TMPDIR` in the sandbox.
fn clean(mut cmd: Command, home: &Path, base: &Path) -> Command {
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["HIPFILE_", "HIPSIM_", "CUFILE_"]
            .iter()
            .any(|p| k.starts_with(p))
            || k == "LD_LIBRARY_PATH"
            || k == "LD_PRELOAD"
        {
            cmd.env_remove(&k);
        }
    }
    cmd.env("HOME", home).env("TMPDIR", base.join("tmp"));
    cmd
}

/// Write the page's files and run its run blocks in order; returns how many ran.
fn run_page(page: &str, require_markers: bool) -> usize {
    let text = std::fs::read_to_string(repo_root().join(page)).unwrap();
    let blocks = blocks(&text);
    if require_markers {
        check_markers(page, &blocks);
    }
    let name = page.replace(['/', '.'], "_");
    let (repo, home) = sandbox(&name);
    let base = repo.parent().unwrap().to_path_buf();
    let state = base.join("exports.sh");
    std::fs::write(&state, "").unwrap();
    let mut ran = 0;
    for b in &blocks {
        match &b.marker {
            Some(Marker::File(file)) => std::fs::write(repo.join(file), &b.text).unwrap(),
            Some(Marker::Run(expect)) => {
                // As in the reader's shell, what an earlier block exported stays exported.
                let script = format!(
                    ". {state}\n{}\nexport -p > {state}\n",
                    b.text,
                    state = state.display()
                );
                let out = clean(Command::new("bash"), &home, &base)
                    .args(["-euo", "pipefail", "-c", &script])
                    .current_dir(&repo)
                    .output()
                    .expect("running bash");
                let stdout = String::from_utf8_lossy(&out.stdout);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.success(),
                    "{page}:{}: the block failed ({}):\n--- block ---\n{}--- stdout ---\n{stdout}--- stderr ---\n{stderr}",
                    b.line,
                    out.status,
                    b.text
                );
                if let Some(expect) = expect {
                    assert!(
                        stdout.contains(expect.as_str()),
                        "{page}:{}: the block did not print {expect:?}:\n{stdout}{stderr}",
                        b.line
                    );
                }
                println!("{page}:{}: ok\n{stdout}", b.line);
                ran += 1;
            }
            _ => {}
        }
    }
    ran
}

#[test]
fn readme_quick_start_builds_and_runs() {
    assert!(run_page("README.md", true) >= 1);
}

#[test]
fn tutorial_programs_build_and_run() {
    assert!(run_page("docs/tutorial.md", true) >= 3);
}

#[test]
fn cufile_first_program_builds_and_runs() {
    assert!(run_page("docs/cufile.md", false) >= 1);
}

#[test]
fn markers_are_enforced() {
    let page = "<!-- doctest: file a.c -->\n```c\nint main(void){return 0;}\n```\n\
                <!-- doctest: run; expect: hi -->\n```sh\ncc a.c\n```\n\
                <!-- doctest: skip: covered elsewhere -->\n```sh\nmake\n```\n```text\nfree\n```\n";
    let b = blocks(page);
    assert_eq!(b.len(), 4);
    assert_eq!(b[0].marker, Some(Marker::File("a.c".into())));
    assert_eq!(b[1].marker, Some(Marker::Run(Some("hi".into()))));
    assert_eq!(b[2].marker, Some(Marker::Skip("covered elsewhere".into())));
    assert_eq!(b[3].marker, None);
    check_markers("ok.md", &b);
    let unmarked = blocks("```sh\nrm -rf /\n```\n");
    assert!(std::panic::catch_unwind(|| check_markers("bad.md", &unmarked)).is_err());
    let unused = blocks("<!-- doctest: file b.c -->\n```c\nx\n```\n");
    assert!(std::panic::catch_unwind(|| check_markers("bad.md", &unused)).is_err());
}
