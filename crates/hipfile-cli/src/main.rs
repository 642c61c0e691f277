//! `hipfile`: the command-line tool of the hipfile library.
//!
//! - `hipfile check`: which GPU runtime the library uses, why, and its configuration.
//! - `hipfile cp SRC DST`: copy a file through GPU memory (AMD's `aiscp`).
//! - `hipfile bench`: gdsio-style throughput and latency, optionally beside plain baselines.
//! - `hipfile stats`: the statistics of a process using hipfile (AMD's `ais-stats`).
//!
//! The global `--sim[=PATH]` runs any of them on the simulated GPU runtime (`libhipsim.so`).

// Every `unsafe` operation sits in its own block, even in an `unsafe fn`, with the `// SAFETY:`
// line that says why it holds; every public `unsafe fn` documents its contract (`# Safety`).
// `pub` only where another crate reaches the item: the rest is `pub(crate)`, so rustc reports
// dead code.
#![warn(unreachable_pub)]
#![deny(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

mod bench;
mod check;
mod cp;
mod cufile_check;
mod json;
mod libprobe;
mod manpages;
mod measure;
mod output;
mod signals;
mod stats;
mod temp;
mod util;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use output::errln;
use util::{fail, CliResult};

/// Move file data between storage and GPU memory with hipfile.
#[derive(Debug, Parser)]
#[command(name = "hipfile", version, propagate_version = true)]
struct Cli {
    /// Use the simulated GPU runtime (test and demo only): libhipsim.so next to this
    /// executable or in its deps/ folder (a build tree), or in ../libexec/hipfile/ (where
    /// scripts/install.sh --tool installs it), or the library at PATH (note the `=`:
    /// --sim=PATH).
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        num_args = 0..=1,
        require_equals = true
    )]
    sim: Option<Option<PathBuf>>,

    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Say which GPU runtime the library uses, why, and its configuration.
    Check(CheckArgs),
    /// Copy a file through GPU device memory (like AMD's aiscp); warns when it has to use host memory.
    Cp(CpArgs),
    /// Measure read/write throughput and latency (gdsio-style output).
    Bench(BenchArgs),
    /// Print the statistics of a process using hipfile, or of a command (like AMD's ais-stats).
    Stats(stats::StatsArgs),
    /// Write the manual pages (hipfile.1 and one per subcommand) into DIR; the installers
    /// copy doc/man/, which this generates.
    #[command(hide = true)]
    Manpages {
        /// Where the pages go.
        dir: PathBuf,
    },
    /// Used by `check --lib`: examine the library at PATH in this process and report.
    #[command(hide = true)]
    ProbeLib {
        /// The library to load.
        path: PathBuf,
    },
}

/// Arguments of `hipfile check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Exit 0 also when no GPU runtime is usable and the library would run host-only.
    #[arg(long)]
    pub allow_host_only: bool,
    /// Examine an installed library, the one applications load, instead of the copy built
    /// into this executable: libhipfile.so.0 as the dynamic loader finds it (LD_LIBRARY_PATH,
    /// ldconfig), or the file at PATH (note the `=`: --lib=PATH).
    #[arg(long, value_name = "PATH", num_args = 0..=1, require_equals = true)]
    pub lib: Option<Option<PathBuf>>,
    /// Files, directories or block devices to examine instead of every block-backed mount.
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
}

/// Arguments of `hipfile cp`.
#[derive(Debug, Args)]
pub struct CpArgs {
    /// Source file.
    pub src: PathBuf,
    /// Destination file (or directory to copy into).
    pub dst: PathBuf,
    /// Re-read both files afterwards and fail if they differ.
    #[arg(long)]
    pub verify: bool,
    /// Bytes per read/write (K, M, G suffixes).
    #[arg(long, value_name = "BYTES", default_value = "64M", value_parser = io_size_arg)]
    pub io_size: u64,
    /// Print a summary with the throughput.
    #[arg(short, long)]
    pub verbose: bool,
    /// No progress bar (it appears on a terminal when the copy takes more than a second).
    #[arg(short, long)]
    pub quiet: bool,
    /// Fail instead of copying through host memory when no GPU runtime is usable.
    #[arg(long)]
    pub require_gpu: bool,
    /// GPU device to stage the data on (gdsio's -d).
    #[arg(long, short = 'd', value_name = "N", default_value_t = 0)]
    pub device: u32,
}

/// What `hipfile bench` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Reads at random io-size-aligned offsets.
    Randread,
    /// Writes at random io-size-aligned offsets.
    Randwrite,
}

impl Mode {
    /// The gdsio `IoType`.
    pub fn io_type(self) -> &'static str {
        match self {
            Mode::Read => "READ",
            Mode::Write => "WRITE",
            Mode::Randread => "RANDREAD",
            Mode::Randwrite => "RANDWRITE",
        }
    }
    /// Whether data moves from the file to memory.
    pub fn is_read(self) -> bool {
        matches!(self, Mode::Read | Mode::Randread)
    }
    /// Whether offsets are random.
    pub fn is_random(self) -> bool {
        matches!(self, Mode::Randread | Mode::Randwrite)
    }
    /// The name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::Write => "write",
            Mode::Randread => "randread",
            Mode::Randwrite => "randwrite",
        }
    }
}

/// Which memory `hipfile bench` moves data to and from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mem {
    /// GPU device memory.
    Device,
    /// Page-aligned pageable host memory.
    Host,
}

impl Mem {
    /// The name as given on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mem::Device => "device",
            Mem::Host => "host",
        }
    }
}

/// Which API `hipfile bench` uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// `hipFileRead` / `hipFileWrite`.
    Sync,
    /// `hipFileBatchIO*`: each thread keeps `--batch-depth` operations in flight.
    Batch,
    /// `hipFileReadAsync` / `hipFileWriteAsync`: each thread queues `--depth` operations on
    /// each of its `--streams` streams, then waits for the streams (or, with
    /// `--keep-in-flight`, queues a new one as soon as the oldest is done).
    Async,
}

impl Api {
    /// Name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Api::Sync => "sync",
            Api::Batch => "batch",
            Api::Async => "async",
        }
    }
}

/// Arguments of `hipfile bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// File to use (created if missing, and then kept). Default: a new scratch file of its
    /// own in $TMPDIR or /tmp (hipfile-bench-<random>.dat, owner-only; the report names it),
    /// removed at the end unless --keep.
    #[arg(long, value_name = "PATH")]
    pub file: Option<PathBuf>,
    /// Bytes moved in total per run (K, M, G suffixes).
    #[arg(long, value_name = "BYTES", default_value = "1G", value_parser = size_arg)]
    pub size: u64,
    /// Bytes per operation (K, M, G suffixes).
    #[arg(long, value_name = "BYTES", default_value = "16M", value_parser = io_size_arg)]
    pub io_size: u64,
    /// Application threads issuing operations.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: u32,
    /// What to measure.
    #[arg(long, value_enum, default_value_t = Mode::Read)]
    pub mode: Mode,
    /// Memory the data moves to or from.
    #[arg(long, value_enum, default_value_t = Mem::Device)]
    pub mem: Mem,
    /// API: `sync` (hipFileRead/Write), `batch` (hipFileBatchIO*) or `async`
    /// (hipFileReadAsync/WriteAsync on GPU streams); batch and async: device memory only.
    #[arg(long, value_name = "API", default_value = "sync", value_parser = api_arg)]
    pub api: Api,
    /// With --api async: GPU streams each thread queues its operations on (1-64).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub streams: u32,
    /// With --api async: operations queued on each stream before the thread waits (1-4096;
    /// beyond about 1000 CUDA's launch queue is full and holds the submitting thread until the
    /// stream drains: 1021 kernel launches on the H200).
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub depth: u32,
    /// With --api async: keep `streams x depth` operations in flight, queuing a new one on a
    /// stream as soon as its oldest one is done, instead of rounds that queue them all and wait
    /// for every stream.
    #[arg(long)]
    pub keep_in_flight: bool,
    /// With --api async: how the streams are registered: `none` (not registered), `fixed` (all
    /// three HIPFILE_STREAM_FIXED_* flags: size and offsets read at submission) or the
    /// HIPFILE_STREAM_* bits as a number (0-15).
    #[arg(long, value_name = "FLAGS", default_value = "0", value_parser = parse_stream_flags)]
    pub stream_flags: StreamRegistration,
    /// With --api batch: operations each thread keeps in flight (1-128).
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub batch_depth: u32,
    /// Open the file with O_DIRECT.
    #[arg(long)]
    pub direct: bool,
    /// Drop the file's pages from the page cache before each run (and skip the warm-up).
    #[arg(long)]
    pub drop_cache: bool,
    /// Also run the plain pread baselines (1 thread and N threads) on the same file and memory.
    #[arg(long)]
    pub compare: bool,
    /// Runs of each configuration (interleaved); the median is reported.
    #[arg(long, value_name = "R", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub repeat: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Keep the default scratch file at the end (the report names it).
    #[arg(long)]
    pub keep: bool,
    /// Do not register the device buffers (hipFileBufRegister) before the runs.
    #[arg(long)]
    pub no_register: bool,
    /// With --mode write/randwrite: overwrite an existing --file.
    #[arg(long)]
    pub force: bool,
    /// GPU device whose memory the data moves to or from (gdsio's -d).
    #[arg(long, short = 'd', value_name = "N", default_value_t = 0)]
    pub device: u32,
    /// Run each configuration for this long instead of once over --size, repeating the
    /// operations (gdsio's -T): seconds, or with an s/m suffix (30s, 2m).
    #[arg(long, value_name = "TIME", value_parser = duration_arg)]
    pub duration: Option<std::time::Duration>,
    /// After the runs (reads only): read every range once more through hipfile and compare
    /// it with the file; fail on the first difference.
    #[arg(long)]
    pub verify: bool,
    /// No progress bar (it appears on a terminal when a run takes more than a second).
    #[arg(short, long)]
    pub quiet: bool,
}

/// `--duration`: seconds (fractions allowed) with an optional `s` or `m` suffix, above zero.
pub fn duration_arg(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        (t, 1.0)
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 && v * scale <= 86400.0 => {
            Ok(std::time::Duration::from_secs_f64(v * scale))
        }
        _ => Err(format!(
            "'{s}' is not a duration: seconds above zero (up to a day), optionally with s or m (30s, 2m)"
        )),
    }
}

/// `--size`: a byte count with an optional K/M/G/T suffix, not zero.
pub fn size_arg(s: &str) -> Result<u64, String> {
    match hipfile::api::parse_size(s) {
        Some(0) => Err("must not be zero".to_string()),
        Some(n) => Ok(n),
        None => Err(format!(
            "'{s}' is not a size (digits with an optional K, M, G or T suffix)"
        )),
    }
}

/// Largest single read or write the API performs (`hipFileRead` clamps to this).
pub const MAX_IO_SIZE: u64 = 0x7fff_f000;

/// `--io-size`: a size that one API call can move whole.
pub fn io_size_arg(s: &str) -> Result<u64, String> {
    let n = size_arg(s)?;
    if n > MAX_IO_SIZE {
        return Err(format!(
            "{n} is larger than the largest single transfer, {MAX_IO_SIZE} bytes"
        ));
    }
    Ok(n)
}

/// `--api`.
pub fn api_arg(s: &str) -> Result<Api, String> {
    match s.to_ascii_lowercase().as_str() {
        "sync" => Ok(Api::Sync),
        "batch" => Ok(Api::Batch),
        "async" => Ok(Api::Async),
        _ => Err(format!(
            "unknown API '{s}': 'sync', 'batch' and 'async' are available"
        )),
    }
}

/// Where `--sim` looks for the simulated runtime, relative to the executable's folder: beside
/// it and in `deps/` (cargo's target/PROFILE), then `../libexec/hipfile/` (an installed tree:
/// PREFIX/bin/hipfile and PREFIX/libexec/hipfile/libhipsim.so).
const HIPSIM_PLACES: [&str; 3] = [
    "libhipsim.so",
    "deps/libhipsim.so",
    "../libexec/hipfile/libhipsim.so",
];

/// The simulated runtime of the executable `exe`: the first of [`HIPSIM_PLACES`] that exists.
fn find_hipsim(exe: &Path) -> Option<PathBuf> {
    let dir = exe.parent()?;
    HIPSIM_PLACES
        .iter()
        .map(|p| dir.join(p))
        .find(|p| p.is_file())
}

/// `--sim[=PATH]`: point the library at the simulated runtime. Must run before the first
/// library call (the library reads these variables once, when it picks the runtime).
fn setup_sim(path: Option<&Path>) -> CliResult<PathBuf> {
    let lib = if let Some(p) = path {
        p.to_path_buf()
    } else {
        let exe = std::env::current_exe()
            .map_err(|e| util::CliError(format!("--sim: cannot locate this executable: {e}")))?;
        match find_hipsim(&exe) {
            Some(p) => p,
            None => {
                return fail(format!(
                    "--sim: no libhipsim.so beside {} (looked for {}); build it with `cargo \
                     build --release --workspace`, install it with `scripts/install.sh --tool`, \
                     or give --sim=PATH",
                    exe.display(),
                    HIPSIM_PLACES.join(", ")
                ))
            }
        }
    };
    // Absolute, so that dlopen takes it as a path and not as a name to search for.
    let lib = std::fs::canonicalize(&lib).map_err(|e| {
        util::CliError(format!(
            "--sim: cannot use '{}': {}",
            lib.display(),
            util::io_text(&e)
        ))
    })?;
    // Soundness of set_var: this runs at the start of main, before the library (or anything
    // else) has started a thread, so no other thread can be reading the environment
    // concurrently (the hazard of setenv in a multi-threaded process).
    std::env::set_var("HIPFILE_HIP_LIBRARY", &lib);
    std::env::set_var("HIPFILE_PLATFORM", "amd");
    util::set_sim(lib.clone());
    Ok(lib)
}

/// After `--sim`: the library must really have loaded the simulator.
fn confirm_sim(lib: &Path) -> CliResult<()> {
    let choice = hipfile::api::runtime_report();
    if !choice.simulated {
        return fail(format!(
            "--sim: the simulated runtime {} was not used ({}; {})",
            lib.display(),
            choice.reason,
            if choice.attempts.is_empty() {
                "no attempt recorded".to_string()
            } else {
                choice.attempts.join("; ")
            }
        ));
    }
    Ok(())
}

/// `hipfile manpages DIR`: the manual pages (see [`manpages`]).
fn manpages(dir: &Path) -> CliResult<()> {
    use clap::CommandFactory;
    std::fs::create_dir_all(dir).map_err(|e| {
        util::CliError(format!(
            "cannot create '{}': {}",
            dir.display(),
            util::io_text(&e)
        ))
    })?;
    manpages::generate(Cli::command(), dir).map_err(|e| {
        util::CliError(format!(
            "cannot write the manual pages into '{}': {}",
            dir.display(),
            util::io_text(&e)
        ))
    })
}

fn run(cli: Cli, sim: Option<PathBuf>) -> CliResult<ExitCode> {
    match &cli.cmd {
        // Only the library at `path` is used in this process (never the built-in copy).
        Cmd::ProbeLib { path } => return Ok(libprobe::child(path)),
        Cmd::Manpages { dir } => return manpages(dir).map(|()| ExitCode::SUCCESS),
        _ => {}
    }
    if let Some(lib) = &sim {
        confirm_sim(lib)?;
    }
    let done = match cli.cmd {
        Cmd::ProbeLib { .. } | Cmd::Manpages { .. } => unreachable!("handled above"),
        // 0, or 2 when a PATH could not be examined; a verdict against the machine is an error.
        Cmd::Check(a) => return check::run_paths(&a, &a.paths),
        Cmd::Cp(a) => cp::run(&a),
        Cmd::Bench(a) => bench::run(&a),
        // The exit code of the command it ran.
        Cmd::Stats(a) => return stats::run(&a),
    };
    done.map(|()| ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    // Parsing touches neither the library nor threads.
    let cli = Cli::parse();
    let sim = match cli
        .sim
        .as_ref()
        .map(|p| setup_sim(p.as_deref()))
        .transpose()
    {
        Ok(s) => s,
        Err(e) => {
            errln!("hipfile: {e}");
            return ExitCode::FAILURE;
        }
    };
    let done = run(cli, sim);
    // The cleanup is done (the subcommand's guards have run). Interrupted: end by the signal,
    // as the shell expects; a reader of standard output that has gone: end by SIGPIPE,
    // quietly, as any program in a pipeline does.
    if let Some(sig) = signals::pending() {
        if let Err(e) = &done {
            errln!("hipfile: {e}");
        }
        signals::reraise(sig);
    }
    match output::stdout_error() {
        Some(libc::EPIPE) => signals::reraise(libc::SIGPIPE),
        Some(errno) => {
            if let Err(e) = &done {
                errln!("hipfile: {e}");
            }
            errln!(
                "hipfile: cannot write to standard output: {}",
                util::errno_text(errno)
            );
            ExitCode::FAILURE
        }
        None => done.unwrap_or_else(|e| {
            errln!("hipfile: {e}");
            ExitCode::FAILURE
        }),
    }
}

/// How `bench --api async` registers its streams (`--stream-flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamRegistration(pub Option<u32>);

impl std::fmt::Display for StreamRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            None => f.write_str("none"),
            Some(7) => f.write_str("fixed"),
            Some(bits) => write!(f, "{bits}"),
        }
    }
}

/// `none`, `fixed` or a number of HIPFILE_STREAM_* bits (0-15).
fn parse_stream_flags(s: &str) -> Result<StreamRegistration, String> {
    match s.to_ascii_lowercase().as_str() {
        "none" => Ok(StreamRegistration(None)),
        "fixed" => Ok(StreamRegistration(Some(7))),
        n => match n.parse::<u32>() {
            Ok(bits) if bits <= 15 => Ok(StreamRegistration(Some(bits))),
            _ => Err(format!(
                "'{s}': none, fixed, or HIPFILE_STREAM_* bits from 0 to 15"
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("hipfile").chain(args.iter().copied()))
    }

    fn bench(args: &[&str]) -> BenchArgs {
        let mut v = vec!["bench"];
        v.extend_from_slice(args);
        match parse(&v).unwrap().cmd {
            Cmd::Bench(b) => b,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cli_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn bench_defaults() {
        let b = bench(&[]);
        assert_eq!(b.size, 1 << 30);
        assert_eq!(b.io_size, 16 << 20);
        assert_eq!(b.threads, 1);
        assert_eq!(b.mode, Mode::Read);
        assert_eq!(b.mem, Mem::Device);
        assert_eq!(b.api, Api::Sync);
        assert_eq!(b.repeat, 3);
        assert!(!b.direct && !b.drop_cache && !b.compare && !b.json && !b.keep && b.file.is_none());
        assert!(!b.force && !b.verify && !b.quiet && b.device == 0 && b.duration.is_none());
    }

    #[test]
    fn durations() {
        use std::time::Duration;
        assert_eq!(duration_arg("30"), Ok(Duration::from_secs(30)));
        assert_eq!(duration_arg("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(duration_arg("2m"), Ok(Duration::from_secs(120)));
        for bad in ["0", "-1", "x", "", "2h", "1e9"] {
            assert!(duration_arg(bad).is_err(), "{bad}");
        }
        let b = bench(&["--duration", "0.5", "-d", "1", "--force", "--verify", "-q"]);
        assert_eq!(b.duration, Some(Duration::from_millis(500)));
        assert!(b.device == 1 && b.force && b.verify && b.quiet);
    }

    #[test]
    fn sizes_take_suffixes() {
        let b = bench(&[
            "--size",
            "64M",
            "--io-size",
            "4k",
            "--threads",
            "8",
            "--file",
            "/x",
        ]);
        assert_eq!((b.size, b.io_size, b.threads), (64 << 20, 4096, 8));
        assert_eq!(bench(&["--size=2G"]).size, 2 << 30);
        assert_eq!(bench(&["--size", "12345"]).size, 12345);
        assert_eq!(size_arg("1GiB"), Ok(1 << 30));
        assert!(size_arg("0").is_err());
        assert!(size_arg("12Q").is_err());
        assert!(size_arg("").is_err());
        assert!(
            io_size_arg("2G").is_err(),
            "above the single-transfer limit"
        );
        assert_eq!(io_size_arg("1G"), Ok(1 << 30));
        assert!(parse(&["bench", "--size", "lots"]).is_err());
        assert!(parse(&["bench", "--threads", "0"]).is_err());
    }

    #[test]
    fn modes_and_memory() {
        for (name, mode, io, read, random) in [
            ("read", Mode::Read, "READ", true, false),
            ("write", Mode::Write, "WRITE", false, false),
            ("randread", Mode::Randread, "RANDREAD", true, true),
            ("randwrite", Mode::Randwrite, "RANDWRITE", false, true),
        ] {
            let b = bench(&["--mode", name]);
            assert_eq!(b.mode, mode);
            assert_eq!(
                (
                    mode.io_type(),
                    mode.is_read(),
                    mode.is_random(),
                    mode.name()
                ),
                (io, read, random, name)
            );
        }
        assert!(parse(&["bench", "--mode", "sideways"]).is_err());
        assert_eq!(bench(&["--mem", "host"]).mem, Mem::Host);
        assert!(parse(&["bench", "--mem", "disk"]).is_err());
    }

    #[test]
    fn apis_sync_batch_and_async_others_refused_clearly() {
        assert_eq!(bench(&["--api", "sync"]).api, Api::Sync);
        let b = bench(&["--api", "batch"]);
        assert_eq!((b.api, b.batch_depth), (Api::Batch, 32));
        assert_eq!(
            bench(&["--api", "BATCH", "--batch-depth", "128"]).batch_depth,
            128
        );
        assert!(parse(&["bench", "--batch-depth", "0"]).is_err());
        assert!(parse(&["bench", "--batch-depth", "129"]).is_err());
        let b = bench(&["--api", "async"]);
        assert_eq!((b.api, b.streams, b.depth), (Api::Async, 1, 8));
        let b = bench(&["--api", "async", "--streams", "8", "--depth", "1"]);
        assert_eq!((b.streams, b.depth, b.keep_in_flight), (8, 1, false));
        assert!(bench(&["--api", "async", "--keep-in-flight"]).keep_in_flight);
        assert!(parse(&["bench", "--streams", "0"]).is_err());
        assert_eq!(bench(&["--api", "async", "--depth", "4096"]).depth, 4096);
        assert!(parse(&["bench", "--depth", "4097"]).is_err());
        let e = parse(&["bench", "--api", "nope"]).unwrap_err().to_string();
        assert!(
            e.contains("'sync', 'batch' and 'async' are available"),
            "{e}"
        );
    }

    #[test]
    fn sim_flag_forms() {
        assert_eq!(parse(&["check"]).unwrap().sim, None);
        assert_eq!(parse(&["--sim", "check"]).unwrap().sim, Some(None));
        assert_eq!(
            parse(&["--sim=/a/libhipsim.so", "check"]).unwrap().sim,
            Some(Some(PathBuf::from("/a/libhipsim.so")))
        );
        assert_eq!(
            parse(&["check", "--sim"]).unwrap().sim,
            Some(None),
            "global option"
        );
        let c = parse(&["cp", "a", "b", "--sim=/x.so", "--verify", "--io-size", "1M"]).unwrap();
        assert_eq!(c.sim, Some(Some(PathBuf::from("/x.so"))));
        match c.cmd {
            Cmd::Cp(a) => {
                assert!(a.verify && a.io_size == 1 << 20 && a.src == Path::new("a") && !a.verbose)
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cp_defaults() {
        match parse(&["cp", "-v", "s", "d"]).unwrap().cmd {
            Cmd::Cp(a) => assert!(
                a.verbose
                    && !a.verify
                    && a.io_size == 64 << 20
                    && !a.quiet
                    && !a.require_gpu
                    && a.device == 0
            ),
            other => panic!("{other:?}"),
        }
        assert!(parse(&["cp", "only-one"]).is_err());
    }

    #[test]
    fn hipsim_is_found_beside_the_executable_or_in_deps() {
        let d = std::env::temp_dir().join(format!("hipfile-cli-find-{}", std::process::id()));
        std::fs::create_dir_all(d.join("deps")).unwrap();
        let exe = d.join("hipfile");
        assert_eq!(find_hipsim(&exe), None);
        std::fs::write(d.join("deps/libhipsim.so"), b"").unwrap();
        assert_eq!(find_hipsim(&exe), Some(d.join("deps/libhipsim.so")));
        std::fs::write(d.join("libhipsim.so"), b"").unwrap();
        assert_eq!(find_hipsim(&exe), Some(d.join("libhipsim.so")));
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn hipsim_is_found_in_an_installed_tree() {
        let p = std::env::temp_dir().join(format!("hipfile-cli-prefix-{}", std::process::id()));
        std::fs::create_dir_all(p.join("bin")).unwrap();
        std::fs::create_dir_all(p.join("libexec/hipfile")).unwrap();
        let exe = p.join("bin/hipfile");
        assert_eq!(find_hipsim(&exe), None);
        std::fs::write(p.join("libexec/hipfile/libhipsim.so"), b"").unwrap();
        assert_eq!(
            find_hipsim(&exe),
            Some(p.join("bin/../libexec/hipfile/libhipsim.so"))
        );
        std::fs::remove_dir_all(&p).unwrap();
    }
}
