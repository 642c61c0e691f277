//! The documentation's links resolve, and the front door stays a front door.
//!
//! Every relative link of README.md, CHANGELOG.md, ARCHITECTURE.md, RELIABILITY.md,
//! scripts/gpu/README.md and docs/**/*.md must name a file or directory of the repository, and
//! every `#anchor` a heading (GitHub's slugs) or an `id` of the Markdown file it names.
//! External links (`https:`, `mailto:`) are not fetched. README.md must stay within 15 KiB and
//! carry the exact test command that `.ci/run` runs.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use common::repo_root;

/// The Markdown files whose links are checked.
fn documents() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = [
        "README.md",
        "CHANGELOG.md",
        "ARCHITECTURE.md",
        "RELIABILITY.md",
        "scripts/gpu/README.md",
    ]
    .iter()
    .map(|p| repo_root().join(p))
    .collect();
    let mut dirs = vec![repo_root().join("docs")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "md") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

/// The text outside fenced code blocks, line by line (code lines become empty, so line
/// numbers stay right).
fn prose(text: &str) -> Vec<String> {
    let mut fenced = false;
    text.lines()
        .map(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return String::new();
            }
            if fenced {
                String::new()
            } else {
                l.to_string()
            }
        })
        .collect()
}

/// `line` without its inline code spans.
fn without_code(line: &str) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for c in line.chars() {
        if c == '`' {
            in_code = !in_code;
            continue;
        }
        if !in_code {
            out.push(c);
        }
    }
    out
}

/// The targets of the inline links `[text](target)` of a line.
fn links(line: &str) -> Vec<String> {
    let line = without_code(line);
    let mut found = Vec::new();
    let mut rest = line.as_str();
    while let Some(i) = rest.find("](") {
        let after = &rest[i + 2..];
        match after.find(')') {
            Some(j) => {
                let target = after[..j].trim();
                // `[x](y "title")`: the target is the first word.
                let target = target.split_whitespace().next().unwrap_or("");
                found.push(target.to_string());
                rest = &after[j + 1..];
            }
            None => break,
        }
    }
    found
}

/// GitHub's anchor for a heading's text: inline markup and links reduced to their text,
/// lower case, punctuation other than `-` and `_` dropped, spaces to `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // [text](target) -> text
    while let Some(i) = rest.find('[') {
        text.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        match (after.find("]("), after.find(')')) {
            (Some(j), Some(k)) if j < k => {
                text.push_str(&after[..j]);
                rest = &after[k + 1..];
            }
            _ => {
                text.push('[');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// Every anchor a Markdown file defines: heading slugs (duplicates numbered as GitHub numbers
/// them) and explicit `id="..."` attributes.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut set = BTreeSet::new();
    for line in prose(text) {
        let t = line.trim_start();
        if t.starts_with('#') {
            let heading = t.trim_start_matches('#').trim();
            let base = slug(heading);
            let mut s = base.clone();
            let mut n = 0;
            while set.contains(&s) {
                n += 1;
                s = format!("{base}-{n}");
            }
            set.insert(s);
        }
        let mut rest = line.as_str();
        while let Some(i) = rest.find("id=\"") {
            let after = &rest[i + 4..];
            if let Some(j) = after.find('"') {
                set.insert(after[..j].to_string());
                rest = &after[j..];
            } else {
                break;
            }
        }
    }
    set
}

fn relative(p: &Path) -> String {
    p.strip_prefix(repo_root())
        .unwrap_or(p)
        .display()
        .to_string()
}

/// Lexically normalised `base/rel` (`..` and `.` resolved, no file system access).
fn join(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for c in base.join(rel).components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// The broken links of `doc`, as messages.
fn broken_links(doc: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(doc).unwrap();
    let mut broken = Vec::new();
    for (n, line) in prose(&text).iter().enumerate() {
        for target in links(line) {
            let where_ = format!("{}:{}: ({target})", relative(doc), n + 1);
            if target.is_empty() {
                broken.push(format!("{where_}: empty link"));
                continue;
            }
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                doc.to_path_buf()
            } else {
                join(doc.parent().unwrap(), path)
            };
            if !file.exists() {
                broken.push(format!("{where_}: {} does not exist", relative(&file)));
                continue;
            }
            if let Some(anchor) = anchor {
                if file.extension().is_none_or(|x| x != "md") {
                    broken.push(format!(
                        "{where_}: an anchor into a file that is not Markdown"
                    ));
                    continue;
                }
                let defined = anchors(&std::fs::read_to_string(&file).unwrap());
                if !defined.contains(anchor) {
                    broken.push(format!(
                        "{where_}: {} has no anchor #{anchor}",
                        relative(&file)
                    ));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_and_anchor_resolves() {
    let docs = documents();
    assert!(
        docs.len() >= 20,
        "expected README, docs/ and the API reference, found {docs:?}"
    );
    let broken: Vec<String> = docs.iter().flat_map(|d| broken_links(d)).collect();
    assert!(
        broken.is_empty(),
        "broken links ({}):\n{}",
        broken.len(),
        broken.join("\n")
    );
}

#[test]
fn the_link_checker_catches_what_it_should() {
    assert_eq!(
        slug("A fresh process's first read"),
        "a-fresh-processs-first-read"
    );
    assert_eq!(
        slug("`cufile.json` and `CUFILE_*` variables"),
        "cufilejson-and-cufile_-variables"
    );
    assert_eq!(slug("4. A first script"), "4-a-first-script");
    assert_eq!(slug("See [the guide](guide.md) now"), "see-the-guide-now");
    assert_eq!(
        links("a [b](c.md#d) `[no](x)` [e](https://f) and [g](h \"t\")"),
        ["c.md#d", "https://f", "h"]
    );
    let a = anchors("# Title\n## Title\n```\n# not a heading\n```\n<a id=\"x1\"></a>\n");
    assert_eq!(
        a,
        ["title", "title-1", "x1"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
    // A link to a missing file and to a missing anchor, in a scratch document.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("docs-links-selftest");
    std::fs::create_dir_all(&dir).unwrap();
    let doc = dir.join("doc.md");
    std::fs::write(
        &doc,
        "# Here\n[ok](#here) [bad](#there) [gone](nothing.md) [self](doc.md#here)\n",
    )
    .unwrap();
    let broken = broken_links(&doc);
    assert_eq!(broken.len(), 2, "{broken:#?}");
    assert!(broken[0].contains("has no anchor #there"), "{}", broken[0]);
    assert!(
        broken[1].contains("nothing.md does not exist"),
        "{}",
        broken[1]
    );
}

#[test]
fn readme_is_a_front_door() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    assert!(
        readme.len() <= 15 * 1024,
        "README.md is {} bytes; the limit is 15360: move detail into docs/",
        readme.len()
    );
    // The test command of .ci/run, exactly as it runs it.
    let ci = std::fs::read_to_string(repo_root().join(".ci/run")).unwrap();
    let command = ci
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("cargo test"))
        .expect(".ci/run runs cargo test");
    let command = command.split(" || ").next().unwrap().trim();
    assert!(
        readme.contains(command),
        "README.md does not show the command .ci/run runs: {command}"
    );
    assert!(readme.contains("./scripts/demo.sh"));
}
