//! `hipfile manpages DIR`: the manual pages, `hipfile.1` and one per subcommand. clap_mangen
//! renders NAME, SYNOPSIS, DESCRIPTION and OPTIONS from the command line itself; this module
//! adds what a command line cannot say: EXIT STATUS and ENVIRONMENT (before VERSION),
//! EXAMPLES and SEE ALSO (at the end), in man-pages(7) order. `doc/man/` holds the output, and
//! a test fails when it differs from what this generates.

use std::io;
use std::path::Path;

use clap_mangen::roff::{bold, roman, Roff};

/// `(term, text)`: one indented paragraph under a bold term.
type Item = (&'static str, &'static str);

/// What one page adds.
struct Extra {
    exit_status: &'static [Item],
    environment: &'static [Item],
    /// `(command line, what it does)`.
    examples: &'static [Item],
    see_also: &'static [&'static str],
}

// ---- shared paragraphs ---------------------------------------------------------------------

const EXIT_USAGE: Item = (
    "2",
    "The command line is wrong (an unknown option, a missing or malformed value); the usage is \
     printed on standard error.",
);
const EXIT_SIGNAL: Item = (
    "killed by SIGINT or SIGTERM",
    "Interrupted (status 130 or 143 in the shell): what the command created is removed first \
     (a destination cp created, bench's scratch file), then the tool ends by the same signal.",
);
const EXIT_SIGPIPE: Item = (
    "killed by SIGPIPE",
    "The reader of standard output went away (hipfile check | head -1): the command finishes \
     and removes its temporary files, then ends quietly by SIGPIPE (status 141 in the shell), \
     as a program in a pipeline does. Any other failure to write standard output (a full \
     disk) is status 1 with one line on standard error.",
);

const ENV_PLATFORM: Item = (
    "HIPFILE_PLATFORM",
    "amd, nvidia or host: the GPU runtime the library uses. Default: chosen automatically (a \
     runtime already loaded, else the first that loads and reports a device, else host-only). \
     --sim sets amd.",
);
const ENV_HIP_LIBRARY: Item = (
    "HIPFILE_HIP_LIBRARY, HIPFILE_CUDA_LIBRARY",
    "The exact HIP runtime (default libamdhip64.so and its versions) or CUDA driver (default \
     libcuda.so.1) file to load. --sim sets HIPFILE_HIP_LIBRARY to the simulated runtime.",
);
const ENV_LOG: Item = (
    "HIPFILE_LOG, HIPFILE_LOG_FILE",
    "The library's log filter (error, warn, info, debug, trace; default warn), written to \
     standard error, or appended to HIPFILE_LOG_FILE. HIPFILE_LOG=error silences the warning \
     that the simulated runtime is in use.",
);
const ENV_COMPAT: Item = (
    "HIPFILE_FORCE_COMPAT_MODE, HIPFILE_ALLOW_COMPAT_MODE",
    "true / false: turn the GPU-direct path off (every transfer goes through pinned bounce \
     buffers), or forbid that fallback for device memory. Defaults: false, true.",
);
const ENV_ENGINE: Item = (
    "HIPFILE_IO_THREADS, HIPFILE_CHUNK_SIZE, HIPFILE_BOUNCE_BUDGET, HIPFILE_INLINE_THRESHOLD",
    "The library's engine: worker threads (default: the cores, 1 to 16), bytes per chunk \
     (4M), pinned bounce memory in all (256M), requests run on the calling thread up to this \
     size (1M). hipfile check prints the values in force.",
);
const ENV_SYNC: Item = (
    "HIPFILE_FALLBACK_SYNC_WRITES",
    "false: no fdatasync at the end of each write call of the fallback and host paths \
     (default true: writes are durable when they return).",
);
const ENV_TMPDIR_CHECK: Item = (
    "TMPDIR",
    "Where the self-test's file is created (default /tmp): owner-only, unlinked as soon as it \
     is open.",
);
const ENV_TMPDIR_BENCH: Item = (
    "TMPDIR",
    "Where the default scratch file is created (default /tmp), under a name of its own \
     (hipfile-bench-<random>.dat, owner-only), never an existing file or link; removed at the \
     end unless --keep.",
);
const ENV_OTHERS: Item = (
    "HIPFILE_*",
    "Every other variable the library reads (HIPFILE_HOST, HIPFILE_DIRECT_IO, \
     HIPFILE_STATS_LEVEL, ...) applies to the tool as to any program using the library; \
     hipfile check lists those that are set.",
);
const ENV_HIPSIM: Item = (
    "HIPSIM_*",
    "With --sim: the simulated runtime's settings and injected faults (for example \
     HIPSIM_COPY_DELAY_US).",
);

// ---- the pages -------------------------------------------------------------------------------

const HIPFILE: Extra = Extra {
    exit_status: &[
        ("0", "The subcommand did what was asked."),
        (
            "1",
            "It failed: one line on standard error says why (for hipfile check: the library \
             cannot do I/O on this machine).",
        ),
        (
            "2",
            "The command line is wrong; for hipfile check also a PATH, or the library --lib \
             names, that could not be examined.",
        ),
        (
            "126, 127, or the command's status",
            "hipfile stats CMD: CMD could not be run, was not found, or exited with that status.",
        ),
        EXIT_SIGNAL,
        EXIT_SIGPIPE,
    ],
    environment: &[
        ENV_PLATFORM,
        ENV_HIP_LIBRARY,
        ENV_LOG,
        (
            "TMPDIR",
            "Where hipfile check's self-test file and hipfile bench's scratch file are created \
             (default /tmp); both are the tool's own (owner-only, never an existing file or \
             link) and removed.",
        ),
        ENV_OTHERS,
        ENV_HIPSIM,
    ],
    examples: &[
        (
            "hipfile check",
            "Which GPU runtime the library uses and why, the kernel, every block-backed mount, \
             the configuration, and a self-test.",
        ),
        (
            "hipfile cp -v /data/in.bin /scratch/out.bin",
            "Copy a file through GPU memory and say how fast.",
        ),
        (
            "hipfile bench --size 4G --io-size 16M --threads 8 --compare",
            "Read throughput and latency beside plain pread baselines.",
        ),
        (
            "hipfile stats -- ./app",
            "Run a program and print the statistics of its hipfile I/O at its end.",
        ),
        (
            "hipfile --sim check",
            "The same on the simulated GPU runtime, on a machine without a GPU.",
        ),
    ],
    see_also: &[
        "hipfile-check(1)",
        "hipfile-cp(1)",
        "hipfile-bench(1)",
        "hipfile-stats(1)",
    ],
};

const CHECK: Extra = Extra {
    exit_status: &[
        (
            "0",
            "The library can do GPU I/O on this machine: a GPU runtime is usable and the \
             self-test passes (with --allow-host-only, host-only is accepted too).",
        ),
        (
            "1",
            "It cannot: no usable GPU runtime, a failed self-test, or an installed library \
             (--lib) that cannot be loaded. One line on standard error says why.",
        ),
        (
            "2",
            "Something named could not be examined, which is no verdict about the machine: a \
             PATH that is missing or unreadable (one line each on standard error; the report's \
             result names it), or the library --lib names was not found (said once, with what \
             to do). Also a wrong command line. When the library cannot do I/O as well, the \
             status is 1.",
        ),
        EXIT_SIGPIPE,
    ],
    environment: &[
        ENV_PLATFORM,
        ENV_HIP_LIBRARY,
        (
            "HIPFILE_CUFILE_LIBRARY",
            "On NVIDIA: the cuFile library for GPUDirect Storage (default libcufile.so.0; none \
             turns it off).",
        ),
        (
            "HIPFILE_HOST",
            "false: host memory is refused, so the host-memory self-test is skipped; without a \
             GPU runtime nothing can move and the check fails.",
        ),
        ENV_COMPAT,
        (
            "HIPFILE_UNSUPPORTED_FILE_SYSTEMS",
            "true: the GPU-direct path serves regular files of any file system, which changes \
             the fastpath capable verdicts.",
        ),
        (
            "LD_LIBRARY_PATH",
            "With --lib: where the dynamic loader looks for libhipfile.so.0 first, before the \
             ldconfig cache and the system's library folders.",
        ),
        ENV_TMPDIR_CHECK,
        ENV_LOG,
        ENV_OTHERS,
    ],
    examples: &[
        (
            "hipfile check",
            "The GPU runtime, the kernel, every block-backed mount, the configuration, a \
             self-test.",
        ),
        (
            "hipfile check /mnt/nvme/data",
            "Whether the GPU-direct path can serve files there, and why not.",
        ),
        (
            "hipfile check --json | jq .ok",
            "The verdict for a script (exit_status and failure are in the object too).",
        ),
        (
            "hipfile check --lib",
            "The installed libhipfile.so.0 that applications load, instead of the copy built \
             into the tool.",
        ),
        ("hipfile --sim check", "On the simulated GPU runtime."),
    ],
    see_also: &["hipfile(1)", "hipfile-bench(1)", "ld.so(8)", "ldconfig(8)"],
};

const CP: Extra = Extra {
    exit_status: &[
        (
            "0",
            "The file was copied (and with --verify found identical). Without a GPU runtime it \
             was copied through host memory, with a warning on standard error.",
        ),
        (
            "1",
            "The copy failed, or --require-gpu refused to copy through host memory; one line \
             on standard error. A destination cp created is removed; one that existed is left \
             and the message says it is incomplete.",
        ),
        EXIT_USAGE,
        EXIT_SIGNAL,
        EXIT_SIGPIPE,
    ],
    environment: &[
        ENV_PLATFORM,
        ENV_HIP_LIBRARY,
        ENV_SYNC,
        ENV_COMPAT,
        ENV_ENGINE,
        ENV_LOG,
        ENV_OTHERS,
    ],
    examples: &[
        (
            "hipfile cp -v /data/in.bin /scratch/out.bin",
            "Copy through GPU memory and print the throughput.",
        ),
        (
            "hipfile cp --verify --io-size 256M big.bin /mnt/nvme/",
            "Copy into a directory in 256 MiB pieces, then compare both files.",
        ),
        (
            "hipfile cp --require-gpu -d 1 in.bin out.bin",
            "Stage the data on GPU 1; fail rather than copy through host memory.",
        ),
        (
            "hipfile --sim cp in.bin out.bin",
            "On the simulated GPU runtime.",
        ),
    ],
    see_also: &["hipfile(1)", "hipfile-check(1)", "cp(1)"],
};

const BENCH: Extra = Extra {
    exit_status: &[
        (
            "0",
            "The runs finished (and with --verify the data was identical).",
        ),
        (
            "1",
            "A run or the preparation failed, or the arguments do not go together (--mode \
             write on an existing --file without --force, --verify with writes); one line on \
             standard error. The scratch file is removed.",
        ),
        EXIT_USAGE,
        EXIT_SIGNAL,
        EXIT_SIGPIPE,
    ],
    environment: &[
        ENV_TMPDIR_BENCH,
        ENV_PLATFORM,
        ENV_HIP_LIBRARY,
        (
            "HIPFILE_STATS_LEVEL",
            "0: the statistics are off and the report cannot say which backend served the runs \
             (default 1).",
        ),
        ENV_COMPAT,
        ENV_ENGINE,
        (
            "HIPFILE_DIRECT_IO",
            "false: aligned reads the page cache cannot serve, and aligned writes, do not go \
             through the library's O_DIRECT descriptor (default true).",
        ),
        ENV_SYNC,
        (
            "HIPFILE_ASYNC_BUFFER_SIZE",
            "--api async: the bounce buffer of each stream (default 16M).",
        ),
        ENV_LOG,
        ENV_OTHERS,
        ENV_HIPSIM,
    ],
    examples: &[
        (
            "hipfile bench --size 4G --io-size 16M --threads 8 --compare",
            "Reads from the page cache into GPU memory, beside plain pread baselines on the \
             same file and memory.",
        ),
        (
            "hipfile bench --file /mnt/nvme/bench.dat --mode write --force --direct",
            "Writes with O_DIRECT to a file of your own, overwriting it.",
        ),
        (
            "hipfile bench --api batch --batch-depth 64 --duration 30s --json",
            "Batch reads for 30 seconds, as one JSON object.",
        ),
        (
            "HIPFILE_FORCE_COMPAT_MODE=true hipfile --sim bench --size 1G --io-size 256M --compare",
            "The engine on the simulated GPU runtime (whose GPU-direct path reads the disk, not \
             the page cache).",
        ),
    ],
    see_also: &["hipfile(1)", "hipfile-check(1)", "hipfile-stats(1)"],
};

const STATS: Extra = Extra {
    exit_status: &[
        ("0", "-p PID: the report was printed."),
        (
            "1",
            "-p PID: the process does not exist, does not answer (not using the library: see \
             --timeout), or its statistics cannot be read; one line on standard error.",
        ),
        (
            "the command's status",
            "-- CMD: the status CMD exited with (128 + N when a signal N ended it), as a shell \
             gives it; 127 when CMD is not found, 126 when it cannot be run.",
        ),
        EXIT_USAGE,
        EXIT_SIGPIPE,
    ],
    environment: &[
        (
            "HIPFILE_STATS_LEVEL",
            "In the process observed (set it for CMD): 0 records nothing (the report stays at \
             zero); 1 (the default), 2 and 3 record the same counters.",
        ),
        (
            "HIPFILE_*",
            "-- CMD: the command inherits the environment, every library variable included.",
        ),
    ],
    examples: &[
        (
            "hipfile stats -p 1234",
            "The statistics of process 1234 now.",
        ),
        (
            "hipfile stats --watch 1 -p 1234",
            "Every second until the process exits (or Ctrl-C), then the final report.",
        ),
        (
            "hipfile stats --json -- ./train.py --epochs 1",
            "Run a command and print its final statistics as JSON; exit with its status.",
        ),
        (
            "hipfile stats --timeout 60 -p 1234",
            "Wait up to a minute for the process's statistics server, which starts with its \
             first hipfile call.",
        ),
    ],
    see_also: &["hipfile(1)", "hipfile-bench(1)"],
};

/// The extra sections of the page of `name` (`hipfile`, `hipfile-check`, ...).
fn extra(name: &str) -> Option<&'static Extra> {
    Some(match name {
        "hipfile" => &HIPFILE,
        "hipfile-check" => &CHECK,
        "hipfile-cp" => &CP,
        "hipfile-bench" => &BENCH,
        "hipfile-stats" => &STATS,
        _ => return None,
    })
}

/// ROFF text of `roff` without the preamble every rendering starts with.
fn body(roff: &Roff) -> String {
    let preamble = Roff::new().render();
    let text = roff.render();
    text.strip_prefix(&preamble).unwrap_or(&text).to_string()
}

/// A section of tagged paragraphs, each under its term in bold.
fn items(roff: &mut Roff, heading: &str, items: &[Item]) {
    roff.control("SH", [heading]);
    for (term, text) in items {
        roff.control("TP", []);
        roff.text([bold(*term)]);
        roff.text([roman(*text)]);
    }
}

/// EXIT STATUS and ENVIRONMENT.
fn middle(e: &Extra) -> String {
    let mut r = Roff::new();
    items(&mut r, "EXIT STATUS", e.exit_status);
    items(&mut r, "ENVIRONMENT", e.environment);
    body(&r)
}

/// EXAMPLES and SEE ALSO.
fn end(e: &Extra) -> String {
    let mut r = Roff::new();
    items(&mut r, "EXAMPLES", e.examples);
    r.control("SH", ["SEE ALSO"]);
    let refs: Vec<_> = e
        .see_also
        .iter()
        .enumerate()
        .flat_map(|(i, s)| {
            let (name, section) = s.split_once('(').unwrap_or((s, ""));
            let sep = if i + 1 < e.see_also.len() { ", " } else { "" };
            [bold(name), roman(format!("({section}{sep}"))]
        })
        .collect();
    r.text(refs);
    body(&r)
}

/// One page: clap_mangen's, with EXIT STATUS and ENVIRONMENT before its VERSION section and
/// EXAMPLES and SEE ALSO at the end.
fn render(cmd: clap::Command) -> io::Result<(String, String)> {
    let man = clap_mangen::Man::new(cmd);
    let name = man.get_filename();
    let mut buf = Vec::new();
    man.render(&mut buf)?;
    let page = String::from_utf8(buf).map_err(io::Error::other)?;
    let stem = name.strip_suffix(".1").unwrap_or(&name);
    let Some(e) = extra(stem) else {
        return Ok((name, page));
    };
    let at = page.find("\n.SH VERSION\n").map_or(page.len(), |i| i + 1);
    let page = format!("{}{}{}{}", &page[..at], middle(e), &page[at..], end(e));
    Ok((name, page))
}

/// Write `hipfile.1` and the page of each visible subcommand into `dir`.
pub(crate) fn generate(cmd: clap::Command, dir: &Path) -> io::Result<()> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    for c in subs.into_iter().chain([cmd]) {
        let (name, page) = render(c)?;
        std::fs::write(dir.join(name), page)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every page the tool has gets its sections, in man-pages(7) order.
    #[test]
    fn every_page_has_exit_status_environment_examples_and_see_also() {
        let mut cmd = crate::Cli::command().disable_help_subcommand(true);
        cmd.build();
        let mut pages: Vec<clap::Command> = cmd
            .get_subcommands()
            .filter(|s| !s.is_hide_set())
            .cloned()
            .collect();
        pages.push(cmd);
        assert_eq!(pages.len(), 5);
        for c in pages {
            let (name, page) = render(c).unwrap();
            // roff quotes a heading with a space.
            let at = |h: &str| {
                let line = if h.contains(' ') {
                    format!("\n.SH \"{h}\"\n")
                } else {
                    format!("\n.SH {h}\n")
                };
                page.find(&line).unwrap_or_else(|| panic!("{name}: no {h}"))
            };
            let order = [
                at("SYNOPSIS"),
                at("OPTIONS"),
                at("EXIT STATUS"),
                at("ENVIRONMENT"),
                at("VERSION"),
                at("EXAMPLES"),
                at("SEE ALSO"),
            ];
            assert!(order.windows(2).all(|w| w[0] < w[1]), "{name}: {order:?}");
            assert_eq!(
                page.matches(".ie \\n(.g").count(),
                1,
                "{name}: one preamble"
            );
        }
    }
}
