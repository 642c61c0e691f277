//! Loading `libhipfile.so.0` costs a process nothing until it calls the library (target T12):
//! `dlopen` + `dlclose` in a C program that never calls it start no thread, open no
//! descriptor and map no GPU runtime. The time it takes is printed (`--nocapture`), not
//! asserted: benchmarks are programs, not timed tests.

mod common;

use std::process::Command;

use common::cc::{run, text, CProgram};
use common::{libhipfile_path, out_dir};

#[test]
fn loading_the_library_starts_nothing() {
    let exe = CProgram::new(
        "tests/c/load_cost.c",
        out_dir("load_cost").join("load_cost"),
    )
    .flags(["-D_GNU_SOURCE", "-O2"])
    .link(["-ldl"])
    .build();
    let mut command = Command::new(&exe);
    command.arg(libhipfile_path());
    // Nothing of the library's own configuration: a process that merely has it loaded.
    for (k, _) in std::env::vars() {
        if k.starts_with("HIPFILE_") || k.starts_with("CUFILE_") {
            command.env_remove(k);
        }
    }
    let out = run(command);
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    println!("{report}");
    let row = |name: &str| -> Vec<i64> {
        let line = report
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no {name:?} line in {report}"));
        line[name.len()..]
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect()
    };
    let threads = row("threads");
    assert_eq!(threads, vec![1, 1, 1], "threads before, loaded, unloaded");
    let fds = row("descriptors");
    assert_eq!(vec![fds[1], fds[2]], vec![fds[0], fds[0]], "descriptors");
    assert_eq!(
        row("runtimes mapped"),
        vec![0, 0, 0],
        "GPU runtime mappings"
    );
}
