//! docs/configuration.md is the one table of everything that configures the libraries: every
//! environment variable the code reads, every parameter of both APIs and every `cufile.json`
//! key must appear in it. The names are taken from the code's own tables, so a variable added
//! there without a line in the page fails here.

mod common;

use std::collections::BTreeSet;

use common::repo_file;

/// The string literals of `text` that start with one of `prefixes` and hold a name (letters,
/// digits, `_`, `.`, `-`): `"NAME"` found wherever it stands, so that quotes elsewhere in the
/// source (a `'"'`, an escaped quote) cannot put the scan out of step.
fn literals(text: &str, prefixes: &[&str]) -> BTreeSet<String> {
    let name_char = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    let mut found = BTreeSet::new();
    for p in prefixes {
        for (i, _) in text.match_indices(&format!("\"{p}")) {
            let rest = &text[i + 1..];
            let end = rest.find(|c: char| !name_char(c)).unwrap_or(rest.len());
            if rest[end..].starts_with('"') {
                found.insert(rest[..end].to_string());
            }
        }
    }
    found
}

/// The part of `text` from `start` to the next `end` after it.
fn section<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in the source"));
    let rest = &text[from..];
    &rest[..rest
        .find(end)
        .unwrap_or_else(|| panic!("no {end:?} after {start:?}"))]
}

/// `name` appears in the page as a whole word (in backticks or plain text).
fn mentioned(page: &str, name: &str) -> bool {
    page.match_indices(name).any(|(i, _)| {
        let before = page[..i].chars().next_back();
        let after = page[i + name.len()..].chars().next();
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        !word(before) && !word(after)
    })
}

fn missing(page: &str, names: &BTreeSet<String>) -> Vec<String> {
    names
        .iter()
        .filter(|n| !mentioned(page, n))
        .cloned()
        .collect()
}

fn page() -> String {
    repo_file("docs/configuration.md")
}

#[test]
fn every_hipfile_variable_of_the_code_s_table_is_documented() {
    // `VARIABLES` in src/config/env.rs: every variable the library reads, and how.
    let table = section(&repo_file("src/config/env.rs"), "const VARIABLES", "];").to_string();
    let names = literals(&table, &["HIPFILE_"]);
    assert!(names.len() >= 19, "VARIABLES parsed as {names:?}");
    let gone = missing(&page(), &names);
    assert!(
        gone.is_empty(),
        "docs/configuration.md lacks these variables of src/config/env.rs: {gone:?}"
    );
}

#[test]
fn every_cufile_variable_and_json_key_is_documented() {
    let mut sources = String::new();
    for f in ["params.rs", "config.rs", "log.rs", "driver.rs"] {
        sources.push_str(&repo_file(&format!("crates/cufile/src/{f}")));
    }
    let variables = literals(&sources, &["CUFILE_"]);
    assert!(
        variables.contains("CUFILE_ENV_PATH_JSON") && variables.len() >= 11,
        "{variables:?}"
    );
    // The JSON keys of the parameter tables (`json: "..."`, the string keys, the slab arrays).
    let params = repo_file("crates/cufile/src/params.rs");
    let keys: BTreeSet<String> = literals(
        &params,
        &[
            "profile.",
            "execution.",
            "properties.",
            "miscellaneous.",
            "logging.",
        ],
    );
    assert!(keys.len() >= 30, "JSON keys parsed as {keys:?}");
    let page = page();
    let mut gone = missing(&page, &variables);
    // A slab key may be written as a suffix of the one before it (`.slab_count`).
    gone.extend(
        keys.iter()
            .filter(|k| {
                !mentioned(&page, k)
                    && !page.contains(&format!("`.{}`", k.rsplit('.').next().unwrap()))
            })
            .cloned(),
    );
    assert!(
        gone.is_empty(),
        "docs/configuration.md lacks these cuFile variables or keys: {gone:?}"
    );
}

#[test]
fn every_simulator_setting_is_documented() {
    let faults = repo_file("crates/hipsim/src/faults.rs");
    let names: BTreeSet<String> = faults
        .lines()
        .filter_map(|l| l.trim().strip_prefix("env: \""))
        .map(|l| l.trim_end_matches("\",").to_string())
        .collect();
    assert!(names.len() >= 19, "hipsim settings parsed as {names:?}");
    let gone = missing(&page(), &names);
    assert!(
        gone.is_empty(),
        "docs/configuration.md lacks these simulator settings: {gone:?}"
    );
}

#[test]
fn every_parameter_of_both_headers_is_documented() {
    let hip = repo_file("include/hipfile.h");
    let cu = repo_file("include/cufile.h");
    let mut names = BTreeSet::new();
    for (text, tag) in [
        (&hip, "typedef enum hipFileSizeTConfigParameter_t"),
        (&hip, "typedef enum hipFileBoolConfigParameter_t"),
        (&hip, "typedef enum hipFileStringConfigParameter_t"),
        (&cu, "typedef enum CUFileSizeTConfigParameter_t"),
        (&cu, "typedef enum CUFileBoolConfigParameter_t"),
        (&cu, "typedef enum CUFileStringConfigParameter_t"),
    ] {
        let body = section(text, tag, "}");
        let before = names.len();
        names.extend(
            body.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .filter(|w| w.starts_with("hipFileParam") || w.starts_with("CUFILE_PARAM_"))
                .map(str::to_string),
        );
        assert!(names.len() > before, "no enumerators found in {tag}");
    }
    assert_eq!(
        names
            .iter()
            .filter(|n| n.starts_with("hipFileParam"))
            .count(),
        27
    );
    let gone = missing(&page(), &names);
    assert!(
        gone.is_empty(),
        "docs/configuration.md lacks these parameters: {gone:?}"
    );
}

#[test]
fn the_check_fails_for_a_name_the_page_lacks() {
    let page = "| `HIPFILE_LOG` | x |\nHIPFILE_LOG_FILE and CUFILE_X.";
    let names: BTreeSet<String> = ["HIPFILE_LOG", "HIPFILE_LOG_FILE", "HIPFILE_LO", "CUFILE_X"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(missing(page, &names), ["HIPFILE_LO"]);
    assert_eq!(
        literals(
            "(\"HIPFILE_A\", x), \"other\", \"HIPFILE_B\"",
            &["HIPFILE_"]
        ),
        ["HIPFILE_A", "HIPFILE_B"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    );
}
