//! `hipfile stats`: the statistics of a process using hipfile (ours or AMD's libhipfile: the
//! transport and the block are the same), like AMD's `ais-stats`.
//!
//! - `hipfile stats -p PID [--json] [--watch S] [--timeout S]`: attach to a live process and
//!   print its report now; with `--watch`, every S seconds until it exits or Ctrl-C, then once
//!   more (the final state).
//! - `hipfile stats [--json] [--watch S] -- CMD ARGS...`: run the command (inheriting stdio),
//!   attach as soon as its statistics server answers, wait for it to exit and print the report
//!   of its final state; exit with its status. The block stays readable after the target exits
//!   because we hold the descriptor the server sent.
//!
//! The text is exactly the library's report (AMD's report, then our extension section);
//! `--json` prints the same snapshot as one JSON object per report ([`snapshot_json`]).

use std::ffi::{c_int, OsString};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitCode, ExitStatus};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use clap::{ArgGroup, Args};
use hipfile::api::stats::{
    self as lib_stats, Connection, GpuBackendStats, Layout, OpenError, Snapshot, Target, Totals,
};
use hipfile::api::{BackendKind, Direction};
use rustix::pipe::PipeFlags;

use crate::json::Value;
use crate::output::{self, errln};

use crate::signals;
use crate::util::{self, fail, CliError, CliResult};

/// How long `-p` waits for the target's statistics server by default.
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Said (on standard error) when a command exits without ever serving statistics.
pub(crate) const NO_STATS: &str =
    "no hipfile statistics: the command never started the hipfile library";

/// Arguments of `hipfile stats`.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("target").required(true).args(["pid", "command"])),
    override_usage = "hipfile stats [OPTIONS] -p PID\n       hipfile stats [OPTIONS] [--] CMD [ARGS]..."
)]
pub(crate) struct StatsArgs {
    /// Attach to this live process (one using libhipfile, ours or AMD's).
    #[arg(short, long, value_name = "PID", value_parser = pid_arg, allow_negative_numbers = true)]
    pub pid: Option<i32>,
    /// Print the report as a JSON object instead of text (one line per report).
    #[arg(long)]
    pub json: bool,
    /// Print the report again every SECONDS (fractions allowed) until the target exits or
    /// Ctrl-C, then the final one. On a terminal the screen is cleared between reports;
    /// otherwise text reports are separated by a blank line.
    #[arg(long, value_name = "SECONDS", value_parser = seconds_arg)]
    pub watch: Option<Duration>,
    /// Give up connecting to the target's statistics server after SECONDS (fractions
    /// allowed). Default: 10 with -p; with a command, as long as the command runs.
    #[arg(long, value_name = "SECONDS", value_parser = seconds_arg)]
    pub timeout: Option<Duration>,
    /// Command to run and report on, like AMD's `ais-stats CMD ARGS...` (best after `--`).
    /// Exits with the command's status.
    #[arg(value_name = "CMD", trailing_var_arg = true, num_args = 1..)]
    pub command: Vec<OsString>,
}

/// `-p`: a process id, positive.
pub(crate) fn pid_arg(s: &str) -> Result<i32, String> {
    match s.trim().parse::<i64>() {
        Ok(n) if n > 0 && n <= i64::from(i32::MAX) => Ok(n as i32),
        Ok(n) if n <= 0 => Err("a process id must be a positive number".to_string()),
        Ok(_) => Err(format!("a process id is at most {}", i32::MAX)),
        Err(_) => Err("not a process id (a positive number)".to_string()),
    }
}

/// `--watch` / `--timeout`: a positive number of seconds, fractions allowed.
pub(crate) fn seconds_arg(s: &str) -> Result<Duration, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("'{s}' is not a number of seconds"))?;
    if x.is_nan() || x <= 0.0 {
        return Err(format!("'{s}': must be more than 0 seconds"));
    }
    if x > MAX_SECONDS {
        return Err(format!(
            "'{s}' seconds is too long (at most {MAX_SECONDS} s, a year)"
        ));
    }
    Ok(Duration::from_secs_f64(x))
}

/// The longest `--watch` or `--timeout`: a year (a clock deadline must stay representable).
const MAX_SECONDS: f64 = 365.0 * 86400.0;

/// Seconds as the user would write them ("10 s", "0.5 s").
fn fmt_secs(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// Run `hipfile stats`; the exit code is 0, or the command's status with a command.
pub(crate) fn run(args: &StatsArgs) -> CliResult<ExitCode> {
    match (args.pid, args.command.split_first()) {
        (Some(pid), _) => attach_pid(pid, args).map(|()| ExitCode::SUCCESS),
        (None, Some((program, rest))) => run_command(program, rest, args),
        // clap's group makes one of them required.
        (None, None) => fail("give -p PID or a command to run (see hipfile stats --help)"),
    }
}

// ---- -p PID ----------------------------------------------------------------------------------

fn attach_pid(pid: i32, args: &StatsArgs) -> CliResult<()> {
    // Our own descriptor of the target, to wait for its exit with a timeout between reports.
    let exit_fd = match args.watch {
        Some(_) => Some(pidfd_open(pid).map_err(|e| open_failed(pid, &open_error(e)))?),
        None => None,
    };
    let target = Target::open(pid).map_err(|e| open_failed(pid, &e))?;
    let timeout = args.timeout.unwrap_or(DEFAULT_TIMEOUT);
    let conn = target
        .connect_timeout(Some(timeout))
        .map_err(|e| connect_failed(pid, &e, Some(timeout)))?;
    match (args.watch, exit_fd) {
        (Some(every), Some(exit_fd)) => {
            let wake = Wake::install()?;
            watch(&conn, pid, &exit_fd, every, args.json, &wake, true)
        }
        _ => {
            let mut out = Output::new(args.json);
            out.frame(&render(&conn, pid, args.json)?)
        }
    }
}

// ---- -- CMD ARGS... --------------------------------------------------------------------------

fn run_command(program: &OsString, rest: &[OsString], args: &StatsArgs) -> CliResult<ExitCode> {
    // Ctrl-C reaches the command too (same process group): we note it and keep waiting for the
    // command, so that its final report is printed. Handlers are reset by exec: the command
    // gets the default disposition.
    let wake = Wake::install()?;
    let mut child = match Command::new(program).args(rest).spawn() {
        Ok(c) => c,
        Err(e) => {
            // As a shell answers: 127 when the command is not found, 126 when it cannot run.
            errln!(
                "hipfile: Failed to start '{}': {}",
                program.to_string_lossy(),
                util::io_text(&e)
            );
            return Ok(ExitCode::from(spawn_failure_code(&e)));
        }
    };
    let pid = i32::try_from(child.id()).expect("process ids fit in pid_t");

    // Until we reap it, the child's pid cannot be reused: both descriptors name it.
    let attached = attach_child(pid, args.timeout);
    let watched = match (&attached, args.watch) {
        (Ok(Some((conn, exit_fd))), Some(every)) => {
            Some(watch(conn, pid, exit_fd, every, args.json, &wake, false))
        }
        _ => None,
    };
    let status = child.wait().map_err(|e| {
        CliError(format!(
            "Failed to poll target process {pid}: {}",
            util::io_text(&e)
        ))
    })?;
    let code = exit_code(status);
    match attached? {
        None => {
            errln!("hipfile: {NO_STATS}");
            Ok(code)
        }
        Some((conn, _)) => {
            match watched {
                // The watch ended with the final report.
                Some(done) => done?,
                None => Output::new(args.json).frame(&render(&conn, pid, args.json)?)?,
            }
            Ok(code)
        }
    }
}

/// Connect to our child; `None` if it exited without ever serving statistics.
fn attach_child(pid: i32, timeout: Option<Duration>) -> CliResult<Option<(Connection, OwnedFd)>> {
    let exit_fd = pidfd_open(pid).map_err(|e| open_failed(pid, &open_error(e)))?;
    let target = Target::open(pid).map_err(|e| open_failed(pid, &e))?;
    match target.connect_timeout(timeout) {
        Ok(conn) => Ok(Some((conn, exit_fd))),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(connect_failed(pid, &e, timeout)),
    }
}

/// The exit code that reports `status` the way a shell does (128 + N for signal N).
/// The shell's exit status for a command that could not be started.
fn spawn_failure_code(e: &io::Error) -> u8 {
    if e.kind() == io::ErrorKind::NotFound {
        127
    } else {
        126
    }
}

pub(crate) fn exit_code(status: ExitStatus) -> ExitCode {
    let n = match (status.code(), status.signal()) {
        (Some(c), _) => c & 0xff,
        (None, Some(sig)) => (128 + sig) & 0xff,
        (None, None) => 1,
    };
    ExitCode::from(n as u8)
}

// ---- reports ---------------------------------------------------------------------------------

fn snapshot(conn: &Connection, pid: i32) -> CliResult<Snapshot> {
    conn.snapshot().map_err(|e| {
        CliError(format!(
            "Failed to generate report from target process {pid}: {}",
            util::io_text(&e)
        ))
    })
}

/// The report of the block now: the library's text, or its JSON object and a newline.
fn render(conn: &Connection, pid: i32, json: bool) -> CliResult<String> {
    let s = snapshot(conn, pid)?;
    Ok(if json {
        let mut j = snapshot_json(&s).to_json();
        j.push('\n');
        j
    } else {
        lib_stats::text_report(&s)
    })
}

/// A number of the report (bandwidth, latency), finite by construction (else 0).
fn num(x: f64) -> Value {
    Value::Num(if x.is_finite() { x } else { 0.0 })
}

/// A counter, written exactly whatever its size.
fn u(n: u64) -> Value {
    Value::UInt(n)
}

/// An array of counters.
fn us(v: &[u64]) -> Value {
    Value::Arr(v.iter().copied().map(u).collect())
}

fn totals_json(t: &Totals) -> Value {
    Value::obj()
        .with("ops", u(t.ops))
        .with("bytes", u(t.bytes))
        .with("time_us", u(t.time_us))
        .with("errors", u(t.errors))
        .with("error_bytes", u(t.error_bytes))
        .with("unaligned", u(t.unaligned))
        .with(
            "bandwidth_gib_s",
            num(lib_stats::bandwidth_gib_s(t.bytes, t.time_us)),
        )
        .with("latency_us", num(lib_stats::latency_us(t.time_us, t.ops)))
}

fn read_write(read: Value, write: Value) -> Value {
    Value::obj().with("read", read).with("write", write)
}

fn gpu_backend_json(b: &GpuBackendStats) -> Value {
    let dir = |d: usize| {
        Value::obj()
            .with("count", us(&b.io_count[d]))
            .with("bytes", us(&b.io_size_bytes[d]))
            .with("time_us", us(&b.io_time_us[d]))
            .with("errors", us(&b.error_count[d]))
            .with("unaligned", u(b.unaligned_count[d]))
    };
    Value::obj()
        .with("in_use", b.in_use != 0)
        .with("read", dir(0))
        .with("write", dir(1))
}

/// The snapshot as one JSON object (keys in a fixed order; `to_json` writes no whitespace).
///
/// `backends` holds the totals per backend and direction ([`Snapshot::totals`]: every
/// device when our extension is present); `gpus` the per-GPU histograms (bucket `k` of
/// every array is the size range of `bucket_label(k)`), for GPUs with records; `extension`
/// is `null` for AMD's blocks. `retired` is present for AMD's retired blocks only.
pub(crate) fn snapshot_json(s: &Snapshot) -> Value {
    let layout = match s.layout {
        Layout::Retired => "retired",
        Layout::V1 => "v1",
        Layout::Unknown => "unknown",
    };
    let mut v = Value::obj()
        .with("layout", layout)
        .with("version", u(s.version))
        .with("level", u(s.level));
    if s.layout == Layout::Retired {
        v = v.with(
            "retired",
            Value::obj()
                .with("fastpath_read_bytes", u(s.retired[0]))
                .with("fastpath_write_bytes", u(s.retired[1]))
                .with("fallback_read_bytes", u(s.retired[2]))
                .with("fallback_write_bytes", u(s.retired[3])),
        );
    }
    if s.layout != Layout::V1 {
        return v;
    }
    let mut backends = Value::obj();
    for kind in [
        BackendKind::Fastpath,
        BackendKind::Fallback,
        BackendKind::Host,
    ] {
        backends = backends.with(
            kind.name(),
            read_write(
                totals_json(&s.totals(kind, Direction::Read)),
                totals_json(&s.totals(kind, Direction::Write)),
            ),
        );
    }
    let gpus: Vec<Value> = s
        .gpus
        .iter()
        .enumerate()
        .filter(|&(g, _)| s.gpu_active(g))
        .map(|(g, row)| {
            Value::obj()
                .with("gpu", g)
                .with("fastpath", gpu_backend_json(&row[0]))
                .with("fallback", gpu_backend_json(&row[1]))
                .with(
                    "host",
                    read_write(
                        totals_json(&s.host_gpu_totals(g, Direction::Read)),
                        totals_json(&s.host_gpu_totals(g, Direction::Write)),
                    ),
                )
        })
        .collect();
    let extension = s.ext.as_ref().map(|e| {
        let mut refusals = Value::obj();
        for (b, name) in ["fastpath", "fallback", "host"].iter().enumerate() {
            let mut counts = Value::obj();
            for slot in 0..lib_stats::REFUSAL_SLOTS {
                let n = e.refusals[b][slot];
                if n != 0 {
                    let id = match lib_stats::refusal_at(slot) {
                        Some(r) => format!("{r:?}"),
                        None => format!("Reason{slot}"),
                    };
                    counts = counts.with(&id, u(n));
                }
            }
            refusals = refusals.with(name, counts);
        }
        Value::obj()
            .with("version", u(e.version))
            .with("refusals", refusals)
            .with("fallback_retries", u(e.fallback_retries))
            .with(
                "async_ops",
                read_write(u(e.async_ops[0]), u(e.async_ops[1])),
            )
            .with(
                "batch_ops",
                read_write(u(e.batch_ops[0]), u(e.batch_ops[1])),
            )
            .with("file_deregistrations", u(e.file_deregistrations))
            .with("buffer_deregistrations", u(e.buffer_deregistrations))
            .with("bounce_bytes_in_use", u(e.bounce_bytes_in_use))
            .with("bounce_bytes_peak", u(e.bounce_bytes_peak))
            .with(
                "size_histogram",
                read_write(
                    e.size_hist[0].to_vec().into(),
                    e.size_hist[1].to_vec().into(),
                ),
            )
    });
    v.with("file_registrations", u(s.file_registrations))
        .with("buffer_registrations", u(s.buffer_registrations))
        .with("fastpath_rejections", u(s.fastpath_rejections))
        .with("backends", backends)
        .with("gpus", Value::Arr(gpus))
        .with("extension", extension)
}

/// Clear the screen and put the cursor home (ANSI).
const CLEAR: &str = "\x1b[H\x1b[2J";

/// How successive reports are laid out on standard output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// Text on a terminal: the screen is cleared before each report.
    Screen,
    /// Text elsewhere: reports separated by a blank line.
    Blank,
    /// JSON: one object per line, nothing between.
    Lines,
}

/// What to write for the report `body` (`first`: the first one written).
pub(crate) fn frame_text(style: Style, first: bool, body: &str) -> String {
    match style {
        Style::Screen => format!("{CLEAR}{body}"),
        Style::Blank if !first => format!("\n{body}"),
        Style::Blank | Style::Lines => body.to_string(),
    }
}

/// Standard output, written report by report.
struct Output {
    style: Style,
    first: bool,
}

impl Output {
    fn new(json: bool) -> Output {
        let style = if json {
            Style::Lines
        } else if util::stdout_is_terminal() {
            Style::Screen
        } else {
            Style::Blank
        };
        Output { style, first: true }
    }

    /// A single report: never clears the screen.
    fn frame(&mut self, body: &str) -> CliResult<()> {
        if self.style == Style::Screen {
            self.style = Style::Blank;
        }
        self.write(body)
    }

    /// Write one report; an error once standard output has failed (`main` then says why, or
    /// ends by `SIGPIPE` when the reader has gone), so that `--watch` stops.
    fn write(&mut self, body: &str) -> CliResult<()> {
        let text = frame_text(self.style, self.first, body);
        self.first = false;
        if output::out_str(&text) {
            Ok(())
        } else {
            fail("standard output failed: no more reports")
        }
    }
}

/// Why a wait between two reports ended.
#[derive(Debug, PartialEq, Eq)]
enum Woken {
    Time,
    Exited,
    Interrupted,
}

/// Print a report every `every` until the target exits (or, with `stop_on_interrupt`,
/// Ctrl-C), then the final one.
fn watch(
    conn: &Connection,
    pid: i32,
    exit_fd: &OwnedFd,
    every: Duration,
    json: bool,
    wake: &Wake,
    stop_on_interrupt: bool,
) -> CliResult<()> {
    let mut out = Output::new(json);
    loop {
        out.write(&render(conn, pid, json)?)?;
        let deadline = Instant::now() + every;
        let woken = loop {
            match wait_until(exit_fd, wake, deadline).map_err(|e| {
                CliError(format!(
                    "Failed to poll target process {pid}: {}",
                    util::io_text(&e)
                ))
            })? {
                Woken::Interrupted if !stop_on_interrupt => continue,
                w => break w,
            }
        };
        if woken != Woken::Time {
            break;
        }
    }
    out.write(&render(conn, pid, json)?)
}

/// Wait until `deadline`, the target's exit (`exit_fd`, a pidfd) or an interrupt.
fn wait_until(exit_fd: &OwnedFd, wake: &Wake, deadline: Instant) -> io::Result<Woken> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    loop {
        // A time too long for a timespec waits without one (the target's exit still ends it).
        let left = Timespec::try_from(deadline.saturating_duration_since(Instant::now())).ok();
        let mut fds = [
            PollFd::new(exit_fd, PollFlags::IN),
            PollFd::new(&wake.read, PollFlags::IN),
        ];
        let ready = match poll(&mut fds, left.as_ref()) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        if !fds[0].revents().is_empty() {
            return Ok(Woken::Exited);
        }
        if !fds[1].revents().is_empty() {
            wake.drain();
            return Ok(Woken::Interrupted);
        }
        if ready == 0 && Instant::now() >= deadline {
            return Ok(Woken::Time);
        }
    }
}

// ---- Ctrl-C ----------------------------------------------------------------------------------

/// The self-pipe (read end, write end; non-blocking, close-on-exec) SIGINT is caught into, so
/// that a poll sees it without a race. Made once per process and never closed: the handler may
/// run at any time.
static WAKE_PIPE: OnceLock<(OwnedFd, OwnedFd)> = OnceLock::new();

extern "C" fn on_interrupt(_sig: c_int) {
    // Async-signal-safe: an atomic load and one write. rustix makes the system call itself
    // (no libc wrapper), so errno is left as the interrupted code had it.
    if let Some((_, write)) = WAKE_PIPE.get() {
        let _ = rustix::io::write(write, &[1]);
    }
}

/// SIGINT caught into [`WAKE_PIPE`], for the rest of the process.
struct Wake {
    read: BorrowedFd<'static>,
}

impl Wake {
    fn install() -> CliResult<Wake> {
        if WAKE_PIPE.get().is_none() {
            let pipe =
                rustix::pipe::pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK).map_err(|e| {
                    CliError(format!(
                        "cannot create a pipe: {}",
                        util::io_text(&e.into())
                    ))
                })?;
            let _ = WAKE_PIPE.set(pipe);
        }
        let (read, _) = WAKE_PIPE.get().expect("made above");
        // SA_RESTART: waits elsewhere (waitpid) just go on.
        signals::catch(libc::SIGINT, on_interrupt, libc::SA_RESTART)
            .map_err(|e| CliError(format!("cannot catch SIGINT: {}", util::io_text(&e))))?;
        Ok(Wake { read: read.as_fd() })
    }

    fn drain(&self) {
        let mut buf = [0u8; 64];
        // The pipe is non-blocking: the loop ends with EAGAIN once it is empty.
        while rustix::io::read(self.read, &mut buf).is_ok_and(|n| n > 0) {}
    }
}

// ---- errors ----------------------------------------------------------------------------------

/// `pidfd_open(pid, 0)`; a pid that is not positive is `EINVAL`, as the kernel says.
fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    let pid = Some(pid)
        .filter(|&p| p > 0)
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    Ok(rustix::process::pidfd_open(
        pid,
        rustix::process::PidfdFlags::empty(),
    )?)
}

/// A failed `pidfd_open` as [`Target::open`] classifies it.
fn open_error(e: io::Error) -> OpenError {
    if e.raw_os_error() == Some(libc::ENOSYS) {
        OpenError::Unsupported(e)
    } else {
        OpenError::NotFound(e)
    }
}

fn open_failed(pid: i32, e: &OpenError) -> CliError {
    let why = match e {
        OpenError::InvalidPid => "invalid process id".to_string(),
        OpenError::NotFound(e) if e.raw_os_error() == Some(libc::ESRCH) => {
            "no such process".to_string()
        }
        OpenError::NotFound(e) | OpenError::NoResources(e) => util::io_text(e),
        OpenError::Unsupported(e) => format!(
            "this kernel cannot watch processes (pidfd_open needs Linux 5.3 or later): {}",
            util::io_text(e)
        ),
    };
    CliError(format!(
        "Failed to create context for target process {pid}: {why}"
    ))
}

fn connect_failed(pid: i32, e: &io::Error, timeout: Option<Duration>) -> CliError {
    let why = match (e.kind(), timeout) {
        (io::ErrorKind::TimedOut, Some(t)) => format!(
            "its statistics server did not answer within {} (is it using the hipfile library? \
             A process serves its statistics from its first hipfile call on; --timeout waits longer)",
            fmt_secs(t)
        ),
        (io::ErrorKind::NotFound, _) => {
            "it exited before its statistics server answered".to_string()
        }
        _ => util::io_text(e),
    };
    CliError(format!("Failed to connect to target process {pid}: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Cli, Cmd};
    use clap::Parser;

    fn parse(args: &[&str]) -> Result<StatsArgs, clap::Error> {
        let argv = ["hipfile", "stats"].iter().chain(args).copied();
        Cli::try_parse_from(argv).map(|c| match c.cmd {
            Cmd::Stats(s) => s,
            other => panic!("{other:?}"),
        })
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn pid_forms() {
        let a = parse(&["-p", "42"]).unwrap();
        assert_eq!(a.pid, Some(42));
        assert!(a.command.is_empty() && !a.json && a.watch.is_none() && a.timeout.is_none());
        let a = parse(&["--pid=7", "--json", "--watch", "0.5", "--timeout", "3"]).unwrap();
        assert_eq!(a.pid, Some(7));
        assert!(a.json);
        assert_eq!(a.watch, Some(Duration::from_millis(500)));
        assert_eq!(a.timeout, Some(Duration::from_secs(3)));
        for bad in ["0", "-1", "x", "99999999999"] {
            let e = parse(&["-p", bad]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "usage error for -p {bad}");
            assert!(e.to_string().contains("process id"), "{e}");
        }
        assert!(parse(&["-p", "1", "--watch", "0"]).is_err());
        assert!(parse(&["-p", "1", "--timeout", "-2"]).is_err());
    }

    #[test]
    fn command_forms() {
        let a = parse(&["--json", "--", "prog", "-x", "--json"]).unwrap();
        assert!(a.json && a.pid.is_none());
        assert_eq!(a.command, os(&["prog", "-x", "--json"]));
        // Without `--`, everything from the program on is the command's.
        let a = parse(&["prog", "--sim", "bench", "--json"]).unwrap();
        assert!(!a.json);
        assert_eq!(a.command, os(&["prog", "--sim", "bench", "--json"]));
        let a = parse(&["--watch", "2", "--", "prog"]).unwrap();
        assert_eq!(a.watch, Some(Duration::from_secs(2)));
    }

    #[test]
    fn exactly_one_target() {
        assert!(parse(&[]).is_err(), "a target is required");
        assert!(parse(&["--json"]).is_err());
        assert!(parse(&["-p", "5", "--", "prog"]).is_err(), "not both");
    }

    #[test]
    fn seconds() {
        assert_eq!(seconds_arg("10"), Ok(Duration::from_secs(10)));
        assert_eq!(seconds_arg("0.25"), Ok(Duration::from_millis(250)));
        assert!(seconds_arg("0").is_err());
        assert!(seconds_arg("nan").is_err());
        assert!(seconds_arg("inf").is_err());
        assert!(seconds_arg("1e300").is_err());
        assert_eq!(
            seconds_arg("1e19"),
            Err("'1e19' seconds is too long (at most 31536000 s, a year)".to_string())
        );
        assert_eq!(seconds_arg("31536000"), Ok(Duration::from_secs(31_536_000)));
        assert!(seconds_arg("soon").is_err());
        assert_eq!(fmt_secs(Duration::from_secs(10)), "10 s");
        assert_eq!(fmt_secs(Duration::from_millis(500)), "0.5 s");
    }

    #[test]
    fn exit_codes_like_a_shell() {
        assert_eq!(
            spawn_failure_code(&io::Error::from_raw_os_error(libc::ENOENT)),
            127
        );
        assert_eq!(
            spawn_failure_code(&io::Error::from_raw_os_error(libc::EACCES)),
            126
        );
        assert_eq!(exit_code(ExitStatus::from_raw(0)), ExitCode::from(0));
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), ExitCode::from(3));
        assert_eq!(
            exit_code(ExitStatus::from_raw(libc::SIGKILL)),
            ExitCode::from(137)
        );
    }

    #[test]
    fn frames() {
        assert_eq!(frame_text(Style::Blank, true, "A\n"), "A\n");
        assert_eq!(frame_text(Style::Blank, false, "A\n"), "\nA\n");
        assert_eq!(frame_text(Style::Lines, false, "{}\n"), "{}\n");
        assert_eq!(frame_text(Style::Screen, true, "A\n"), "\x1b[H\x1b[2JA\n");
    }

    #[test]
    fn error_messages_name_the_pid_and_the_reason() {
        let e = open_failed(
            999_999,
            &OpenError::NotFound(io::Error::from_raw_os_error(libc::ESRCH)),
        );
        assert_eq!(
            e.0,
            "Failed to create context for target process 999999: no such process"
        );
        let e = connect_failed(
            12,
            &io::Error::new(io::ErrorKind::TimedOut, "x"),
            Some(Duration::from_millis(500)),
        );
        assert!(
            e.0.starts_with("Failed to connect to target process 12: its statistics server did not answer within 0.5 s"),
            "{}",
            e.0
        );
    }
}

#[cfg(test)]
mod json_tests {
    //! The JSON form of snapshots (moved from the library's statistics tests with the JSON
    //! writer; the blocks are built the same way, the assertions are unchanged).
    use super::*;
    use hipfile::api::stats::Extension;
    use hipfile::api::Refusal;

    /// `sizeof(StatsV1)` (40 + 16 × 2 × 1048) and AMD's retired block size.
    const V1_SIZE: usize = 33_576;
    const RETIRED_SIZE: usize = 528;

    fn json(s: &Snapshot) -> String {
        snapshot_json(s).to_json()
    }

    fn put(b: &mut [u8], off: usize, v: u64) {
        b[off..off + 8].copy_from_slice(&v.to_le_bytes());
    }

    fn v1_hist(g: usize, b: usize, field: usize, d: usize, k: usize) -> usize {
        40 + (g * 2 + b) * 1048 + field + d * 128 + k * 8
    }

    #[test]
    fn retired_report() {
        let mut b = vec![0u8; RETIRED_SIZE];
        b[0..8].copy_from_slice(&1u64.to_le_bytes());
        b[8..16].copy_from_slice(&1u64.to_le_bytes());
        b[16..24].copy_from_slice(&4096u64.to_le_bytes());
        let s = Snapshot::from_bytes(&b).unwrap();
        assert!(
            json(&s).starts_with("{\"layout\":\"retired\",\"version\":1,\"level\":1,\"retired\":{")
        );
    }

    #[test]
    fn unknown_report_has_two_lines() {
        let mut b = vec![0u8; V1_SIZE];
        b[0..8].copy_from_slice(&7u64.to_le_bytes());
        b[8..16].copy_from_slice(&2u64.to_le_bytes());
        let s = Snapshot::from_bytes(&b).unwrap();
        assert_eq!(
            json(&s),
            "{\"layout\":\"unknown\",\"version\":7,\"level\":2}"
        );
    }

    #[test]
    fn amd_v1_block_report() {
        // What AMD's library would have written: level 2, one GPU (3), no extension.
        let mut b = vec![0u8; V1_SIZE];
        put(&mut b, 0, 1);
        put(&mut b, 8, 2);
        put(&mut b, 16, 5);
        put(&mut b, 24, 6);
        put(&mut b, 32, 7);
        let g = 3;
        put(&mut b, 40 + (g * 2) * 1048, 1); // Fastpath inUse
        let (size, count, time, err) = (8, 264, 520, 776);
        put(&mut b, v1_hist(g, 0, size, 0, 9), 2 << 20);
        put(&mut b, v1_hist(g, 0, count, 0, 9), 2);
        put(&mut b, v1_hist(g, 0, time, 0, 9), 1000);
        put(&mut b, v1_hist(g, 1, err, 1, 1), 1);
        put(&mut b, 40 + (g * 2 + 1) * 1048 + 1032 + 8, 4); // Fallback write unaligned
        let s = Snapshot::from_bytes(&b).unwrap();
        assert_eq!(s.layout, Layout::V1);
        let json = json(&s);
        assert!(json
            .starts_with("{\"layout\":\"v1\",\"version\":1,\"level\":2,\"file_registrations\":5,"));
        assert!(json.contains("\"gpus\":[{\"gpu\":3,"));
        assert!(json.ends_with(",\"extension\":null}"));
    }

    /// The extension's host totals and refusals as the library's recording of
    /// `record_the_mix` (tests/stats_inprocess.rs) leaves them.
    #[test]
    fn extension_host_totals_and_refusals() {
        let mut b = vec![0u8; V1_SIZE];
        put(&mut b, 0, 1);
        put(&mut b, 8, 2);
        let mut s = Snapshot::from_bytes(&b).unwrap();
        let mut e = Extension {
            version: 1,
            ..Extension::default()
        };
        let read = lib_stats::direction_index(Direction::Read);
        e.io[2][read] = Totals {
            ops: 1,
            bytes: 100,
            ..Totals::default()
        };
        e.refusals[0][lib_stats::refusal_slot(Refusal::UnalignedOffset)] = 2;
        e.refusals[2][lib_stats::refusal_slot(Refusal::NotHostMemory)] = 1;
        s.ext = Some(Box::new(e));
        let json = json(&s);
        assert!(
            json.contains("\"host\":{\"read\":{\"ops\":1,\"bytes\":100,"),
            "{json}"
        );
        assert!(json.contains("\"refusals\":{\"fastpath\":{\"UnalignedOffset\":2},\"fallback\":{},\"host\":{\"NotHostMemory\":1}}"));
    }
}
