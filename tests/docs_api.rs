//! The API reference (docs/api/) is generated from the header comments by
//! `scripts/gen-api-docs.py`, and must be current and complete:
//!
//! - the generator, run with `--check`, finds every exported function documented (a `@brief`,
//!   every `@param`, what it returns and every status it reports, thread safety, differences)
//!   and every status code explained, and the files in docs/api/ identical to what it would write;
//! - independently of the generator, every name of `tests/exported-symbols.txt` and
//!   `tests/cufile-exported-symbols.txt` has its section in docs/api/, with its thread safety
//!   and differences, and every status code of the three headers has its row in errors.md.
//!
//! When this fails after a header change: `python3 scripts/gen-api-docs.py`, and commit
//! docs/api/ with the header.

mod common;

use std::process::Command;

use common::{repo_file, repo_root};

fn exports(rel: &str) -> Vec<String> {
    repo_file(rel)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

#[test]
fn generated_reference_is_current_and_complete() {
    let out = Command::new("python3")
        .arg(repo_root().join("scripts/gen-api-docs.py"))
        .arg("--check")
        .current_dir(repo_root())
        .output()
        .expect("running python3 scripts/gen-api-docs.py (python3 is needed)");
    assert!(
        out.status.success(),
        "scripts/gen-api-docs.py --check failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The text of the `### name` section of a reference page, if there is one.
fn section<'a>(page: &'a str, name: &str) -> Option<&'a str> {
    let head = format!("\n### {name}\n");
    let start = page.find(&head)? + head.len();
    let rest = &page[start..];
    let end = rest
        .find("\n### ")
        .or_else(|| rest.find("\n## "))
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

#[test]
fn every_exported_function_has_its_section() {
    let pages = [
        repo_file("docs/api/hipfile.md"),
        repo_file("docs/api/hipfile-stats.md"),
        repo_file("docs/api/cufile.md"),
    ];
    let mut names = exports("tests/exported-symbols.txt");
    assert_eq!(names.len(), 39);
    let cufile = exports("tests/cufile-exported-symbols.txt");
    assert_eq!(cufile.len(), 50);
    names.extend(cufile);
    let mut problems = Vec::new();
    for name in &names {
        let found: Vec<&str> = pages.iter().filter_map(|p| section(p, name)).collect();
        match found.as_slice() {
            [s] => {
                for part in [
                    format!("{name}("),
                    "**Thread safety** ".to_string(),
                    "**Differences** ".to_string(),
                ] {
                    if !s.contains(&part) {
                        problems.push(format!("{name}: its section has no {part:?}"));
                    }
                }
            }
            [] => problems.push(format!("{name}: no section in docs/api/")),
            _ => problems.push(format!("{name}: more than one section in docs/api/")),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The enumerators of the C enum `typedef enum TAG { ... }` in `text`, comments stripped.
fn enumerators(text: &str, tag: &str) -> Vec<String> {
    let start = text
        .find(&format!("typedef enum {tag} {{"))
        .unwrap_or_else(|| panic!("no enum {tag}"));
    let body = &text[start..];
    let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
    let mut code = String::new();
    let mut rest = body;
    while let Some(i) = rest.find("/*") {
        code.push_str(&rest[..i]);
        rest = &rest[i + rest[i..].find("*/").unwrap() + 2..];
    }
    code.push_str(rest);
    code.split(',')
        .filter_map(|e| Some(e.split('=').next()?.trim().to_string()))
        .filter(|e| !e.is_empty())
        .collect()
}

#[test]
fn every_status_code_has_its_row() {
    let errors = repo_file("docs/api/errors.md");
    let mut names = enumerators(&repo_file("include/hipfile.h"), "hipFileOpError");
    names.extend(repo_file("include/cufile.h").lines().filter_map(|l| {
        let l = l.trim().strip_prefix("CUFILE_OP(")?;
        Some(l.split(", ").nth(1)?.to_string())
    }));
    names.extend(enumerators(
        &repo_file("include/hipfile-stats.h"),
        "hipFileStatsError",
    ));
    // 38 hipFile codes, 49 cuFile codes, 5 statistics-client codes.
    assert_eq!(names.len(), 38 + 49 + 5, "{names:?}");
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| {
            !errors.contains(&format!("<a id=\"{}\"></a>", n.to_lowercase()))
                || !errors.contains(&format!("`{n}`"))
        })
        .collect();
    assert!(
        missing.is_empty(),
        "docs/api/errors.md has no row for {missing:?}"
    );
}

#[test]
fn the_section_finder_finds_only_whole_sections() {
    let page = "# T\n\n## A\n\n### f\n\nbody f\n\n### fg\n\nbody fg\n## B\n";
    assert_eq!(section(page, "f"), Some("\nbody f\n"));
    assert_eq!(section(page, "fg"), Some("\nbody fg"));
    assert_eq!(section(page, "g"), None);
    assert_eq!(
        enumerators(
            "typedef enum e { /** a, b = 2 */ x = 0, /* y */ z = 1 } e_t;",
            "e"
        ),
        ["x", "z"]
    );
}
