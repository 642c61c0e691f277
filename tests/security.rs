//! Nothing from another local user or from a hostile environment gets in (docs/security.md).
//!
//! - Another user's connection to a process's statistics socket gets nothing; root and the
//!   same user get the block; a set-user-ID process is readable by root only.
//! - A statistics socket name bound first by another process is detected: readers refuse it,
//!   the real server says in its log which process holds its name.
//! - A set-user-ID root program run by `nobody` ignores every variable that names a library, a
//!   file or a directory (libhipfile's and libcufile's), and says so once.
//! - cuFile's log in a directory other users can write: a planted symbolic link is not followed,
//!   a planted FIFO does not hang the process.
//! - Every descriptor the library opens is close-on-exec.
//!
//! The programs are `tests/c/security_probe.c` (linked with libhipfile.so.0) and
//! `tests/c/evil_runtime.c` (a "runtime" whose constructor leaves a marker file), built into a
//! fresh directory under the system's temporary directory that every user can reach, with
//! copies of the libraries (the simulator stands in for `libamdhip64.so` and `libcuda.so.1`
//! there, found through the program's `DT_RPATH` as a real installation would be).
//!
//! The tests that need another user run only as root (CI runs as root): they install a
//! set-user-ID copy of the probe (`chown root`, `chmod 4755`) and run programs as `nobody`
//! with `runuser`. Anywhere else, or where the directory is mounted `nosuid`, they print why
//! they are skipped and pass.

mod common;

use std::ffi::CString;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::cc::CProgram;
use common::{deps_dir, hipfile_tool, hipsim_path, libhipfile_path, skipped, stderr, stdout};

// ---- where the programs live ----------------------------------------------------------------

/// A fresh directory every user can reach (mode 0755, every ancestor searchable), removed on
/// drop.
struct Sandbox {
    dir: PathBuf,
}

/// Why `dir` and its ancestors do not let every user through, if they do not.
fn unreachable_reason(dir: &Path) -> Option<String> {
    for a in dir.ancestors() {
        let mode = std::fs::metadata(a).ok()?.permissions().mode();
        if mode & 0o001 == 0 {
            return Some(format!("{} is not searchable by other users", a.display()));
        }
    }
    None
}

/// Whether `dir` is on a file system mounted `nosuid` (set-user-ID bits would be ignored).
fn nosuid(dir: &Path) -> bool {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: statvfs is plain data; all-zero is valid.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path and a valid out-pointer.
    assert_eq!(unsafe { libc::statvfs(c.as_ptr(), &mut st) }, 0);
    st.f_flag & libc::ST_NOSUID != 0
}

impl Sandbox {
    /// A directory under the first base that every user can reach (and that allows
    /// set-user-ID programs when `setuid`); `Err` says why there is none.
    fn new(tag: &str, setuid: bool) -> Result<Sandbox, String> {
        let bases = [
            std::env::temp_dir(),
            PathBuf::from("/var/tmp"),
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")),
        ];
        let mut why = Vec::new();
        for base in bases {
            if !base.is_dir() {
                continue;
            }
            if let Some(r) = unreachable_reason(&base) {
                why.push(r);
                continue;
            }
            if setuid && nosuid(&base) {
                why.push(format!("{} is mounted nosuid", base.display()));
                continue;
            }
            let template = base.join(format!("hipfile-security-{tag}-XXXXXX"));
            let mut bytes = template.into_os_string().into_encoded_bytes();
            bytes.push(0);
            // SAFETY: a NUL-terminated, writable template ending in XXXXXX.
            let p = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
            assert!(!p.is_null(), "mkdtemp: {}", std::io::Error::last_os_error());
            bytes.pop();
            // SAFETY: mkdtemp filled the template in place with valid path bytes.
            let dir =
                PathBuf::from(unsafe { std::ffi::OsString::from_encoded_bytes_unchecked(bytes) });
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            return Ok(Sandbox { dir });
        }
        Err(why.join("; "))
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The probe, the evil runtime and the libraries, in `sb`.
struct Probe {
    exe: PathBuf,
    evil: PathBuf,
    cufile: PathBuf,
}

impl Probe {
    fn build(sb: &Sandbox) -> Probe {
        // First: building the tool may rewrite target/*/deps/libhipfile.so (the library without
        // the tests' feature), which must not happen while another test copies it.
        hipfile_tool();
        let copy = |from: &Path, name: &str| {
            let to = sb.path(name);
            std::fs::copy(from, &to).unwrap();
            std::fs::set_permissions(&to, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        copy(&libhipfile_path(), "libhipfile.so.0");
        copy(&hipsim_path(), "libamdhip64.so");
        copy(&hipsim_path(), "libcuda.so.1");
        copy(&deps_dir().join("libcufile.so"), "libcufile.so.0");
        let exe = CProgram::new("tests/c/security_probe.c", sb.path("security_probe"))
            .headers()
            .flags(["-D_GNU_SOURCE", "-O2"])
            .link([
                format!("-L{}", deps_dir().display()),
                "-lhipfile".to_string(),
                "-ldl".to_string(),
                // DT_RPATH, not RUNPATH: it also serves the library's own dlopen of the
                // runtimes, and the loader honours it (an absolute path) for a set-user-ID
                // program too.
                format!("-Wl,--disable-new-dtags,-rpath,{}", sb.dir.display()),
            ])
            .build();
        let evil = CProgram::new("tests/c/evil_runtime.c", sb.path("libevil.so"))
            .flags(["-shared", "-fPIC", "-O2"])
            .build();
        Probe {
            exe,
            evil,
            cufile: sb.path("libcufile.so.0"),
        }
    }

    /// A set-user-ID root copy of the probe.
    fn setuid_copy(&self, sb: &Sandbox) -> PathBuf {
        let p = sb.path("security_probe_suid");
        std::fs::copy(&self.exe, &p).unwrap();
        let c = CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::chown(c.as_ptr(), 0, 0) }, 0);
        // chmod after chown: chown clears the set-user-ID bit.
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o4755)).unwrap();
        p
    }
}

// ---- running things ---------------------------------------------------------------------------

/// Whether this process may run programs as `nobody`; otherwise why not.
fn can_switch_users() -> Result<(), String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not running as root (CI runs these tests as root)".into());
    }
    // SAFETY: a NUL-terminated name; the result is only tested for NULL.
    if unsafe { libc::getpwnam(c"nobody".as_ptr()) }.is_null() {
        return Err("there is no user nobody".into());
    }
    match Command::new("runuser")
        .args(["-u", "nobody", "--", "true"])
        .status()
    {
        Ok(s) if s.success() => Ok(()),
        Ok(s) => Err(format!("runuser -u nobody -- true failed: {s}")),
        Err(e) => Err(format!("runuser cannot be run: {e}")),
    }
}

/// Skip the calling test (print why) unless it can run programs as `nobody` in a sandbox that
/// allows set-user-ID programs.
macro_rules! require_root {
    ($tag:expr) => {
        match can_switch_users().and_then(|()| Sandbox::new($tag, true)) {
            Ok(sb) => sb,
            Err(why) => {
                skipped(&format!("security check {}: {why}", $tag));
                return;
            }
        }
    };
}

/// `exe args` (as `user` through runuser when given) in `cwd`, with an environment cleared of
/// hipfile's, the simulator's and cuFile's variables and of `LD_LIBRARY_PATH`, plus `env`.
fn command(user: Option<&str>, exe: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = match user {
        Some(u) => {
            let mut c = Command::new("runuser");
            c.args(["-u", u, "--"]).arg(exe);
            c
        }
        None => Command::new(exe),
    };
    cmd.args(args).current_dir("/");
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if ["HIPFILE_", "HIPSIM_", "CUFILE_"]
            .iter()
            .any(|p| k.starts_with(p))
        {
            cmd.env_remove(&k);
        }
    }
    cmd.env_remove("LD_LIBRARY_PATH").envs(env.iter().copied());
    cmd
}

fn output(mut cmd: Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("run {cmd:?}: {e}"));
    println!(
        "{cmd:?}: {}\n--- stdout\n{}--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A long-running probe (`serve`, `squat`, ...): its standard output is read up to a marker
/// line; its standard error goes to a file, read when it has exited.
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: std::io::Lines<BufReader<std::process::ChildStdout>>,
    stderr_path: PathBuf,
}

impl Running {
    fn start(mut cmd: Command, stderr_path: PathBuf) -> Running {
        let err = std::fs::File::create(&stderr_path).unwrap();
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err));
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let stdin = child.stdin.take();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        Running {
            child,
            stdin,
            lines,
            stderr_path,
        }
    }

    /// Read lines until one starts with `marker`; return it.
    fn wait_for(&mut self, marker: &str) -> String {
        for line in self.lines.by_ref() {
            let line = line.unwrap();
            if line.starts_with(marker) {
                return line;
            }
        }
        panic!(
            "the program ended before printing {marker}:\n{}",
            std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
        );
    }

    fn send_line(&mut self) {
        writeln!(self.stdin.as_mut().unwrap()).unwrap();
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Close standard input, wait for the exit, return standard error.
    fn finish(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait().unwrap();
        let text = std::fs::read_to_string(&self.stderr_path).unwrap();
        println!("{status}; stderr:\n{text}");
        text
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The statistics target: `probe serve` as `user` (or the set-user-ID copy, run by `nobody`),
/// logging at info level; returns once it serves, with the probe's pid (not runuser's).
fn serve(sb: &Sandbox, exe: &Path, user: Option<&str>, tag: &str) -> (Running, i32) {
    let cmd = command(user, exe, &["serve"], &[("HIPFILE_LOG", "info")]);
    let mut t = Running::start(cmd, sb.path(&format!("{tag}.stderr")));
    let line = t.wait_for("READY");
    let pid = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix("pid="))
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"));
    (t, pid)
}

/// What `probe raw PID` (the wire protocol by hand) got as `user`.
fn raw_as(probe: &Probe, user: Option<&str>, pid: i32) -> String {
    let out = output(command(user, &probe.exe, &["raw", &pid.to_string()], &[]));
    stdout(&out).trim().to_string()
}

/// The `hipfile` tool, copied where every user can run it.
fn hipfile_cli(sb: &Sandbox) -> PathBuf {
    let to = sb.path("hipfile");
    std::fs::copy(hipfile_tool(), &to).unwrap();
    to
}

// ---- the statistics socket --------------------------------------------------------------------

#[test]
fn another_users_connection_gets_nothing() {
    let sb = require_root!("peer");
    let probe = Probe::build(&sb);
    let cli = hipfile_cli(&sb);

    // A root process: nobody gets nothing, root gets the block.
    let (target, pid) = serve(&sb, &probe.exe, None, "root-target");
    assert_eq!(raw_as(&probe, Some("nobody"), pid), "nofd 0");
    assert_eq!(raw_as(&probe, None, pid), "fd");
    // The client API refuses at once (it does not wait for its 20 s), with EACCES.
    let out = output(command(
        Some("nobody"),
        &probe.exe,
        &["api", &pid.to_string()],
        &[("HIPFILE_STATS_CONNECT_TIMEOUT", "20")],
    ));
    let line = stdout(&out);
    assert!(line.starts_with("connect=3 errno=13 ms="), "{line}");
    let ms: u64 = line.trim().rsplit('=').next().unwrap().parse().unwrap();
    assert!(
        ms < 10_000,
        "refused at once, not after the timeout: {line}"
    );
    assert!(
        stderr(&out).contains(&format!(
            "statistics of process {pid}: it refused to hand over its statistics"
        )),
        "{}",
        stderr(&out)
    );
    // hipfile stats -p: an error that says why, no report.
    let out = output(command(
        Some("nobody"),
        &cli,
        &["stats", "-p", &pid.to_string(), "--timeout", "20"],
        &[],
    ));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "");
    assert!(
        stderr(&out).contains(&format!(
            "Failed to connect to target process {pid}: it refused to hand over its statistics"
        )),
        "{}",
        stderr(&out)
    );
    // Three refused connections, one line at info level.
    let log = target.finish();
    assert_eq!(
        log.matches("statistics refused to process").count(),
        1,
        "{log}"
    );
    assert!(
        log.contains("INFO") && log.contains("(user 65534): only root and processes of this process's own user and group may read its statistics"),
        "{log}"
    );

    // A process of nobody's: nobody and root both read it.
    let (target, served) = serve(&sb, &probe.exe, Some("nobody"), "nobody-target");
    assert_eq!(raw_as(&probe, Some("nobody"), served), "fd");
    assert_eq!(raw_as(&probe, None, served), "fd");
    drop(target);

    // A set-user-ID root program run by nobody: not dumpable, so root only.
    let suid = probe.setuid_copy(&sb);
    let (target, served) = serve(&sb, &suid, Some("nobody"), "setuid-target");
    assert_eq!(raw_as(&probe, Some("nobody"), served), "nofd 0");
    assert_eq!(raw_as(&probe, None, served), "fd");
    let log = target.finish();
    assert!(log.contains("this process is not dumpable"), "{log}");
}

#[test]
fn a_squatted_name_is_detected() {
    let sb = Sandbox::new("squat", false).expect("a scratch directory");
    let probe = Probe::build(&sb);
    // The target waits for a line before it opens the driver, so that the squatter can take
    // its name first.
    let mut target = Running::start(
        command(
            None,
            &probe.exe,
            &["serve-after-line"],
            &[("HIPFILE_LOG", "warn")],
        ),
        sb.path("target.stderr"),
    );
    target.wait_for("WAITING");
    let pid = target.pid();
    let mut squatter = Running::start(
        command(None, &probe.exe, &["squat", &pid.to_string()], &[]),
        sb.path("squatter.stderr"),
    );
    squatter.wait_for("SQUATTING");
    let squatter_pid = squatter.pid();
    target.send_line();
    target.wait_for("READY");

    // The safe API: refused at once, naming the process that holds the name.
    let t = hipfile::api::stats::Target::open(pid).unwrap();
    let start = Instant::now();
    let e = t
        .connect_timeout(Some(Duration::from_secs(20)))
        .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied);
    assert_eq!(
        e.to_string(),
        format!(
            "its statistics socket name (AISSTATS{pid:08x}) is held by process {squatter_pid} (user {}), not by process {pid}: refusing it",
            // SAFETY: geteuid has no preconditions.
            unsafe { libc::geteuid() }
        )
    );
    // The C API: not accessible, EACCES, at once.
    let out = output(command(
        None,
        &probe.exe,
        &["api", &pid.to_string()],
        &[("HIPFILE_STATS_CONNECT_TIMEOUT", "20")],
    ));
    let line = stdout(&out);
    assert!(line.starts_with("connect=3 errno=13 ms="), "{line}");
    assert!(
        !line.contains("4242"),
        "the forged block was not reported: {line}"
    );

    // The target said in its log, at warn level, who took its name.
    drop(squatter);
    let log = target.finish();
    assert!(
        log.contains("WARN")
            && log.contains(&format!(
                "statistics are recorded but not served to other processes: the socket name AISSTATS{pid:08x} is taken by process {squatter_pid} (user "
            )),
        "{log}"
    );
}

// ---- secure-execution mode --------------------------------------------------------------------

#[test]
fn setuid_program_ignores_library_and_log_variables() {
    let sb = require_root!("env");
    let probe = Probe::build(&sb);
    let suid = probe.setuid_copy(&sb);
    let evil = probe.evil.to_str().unwrap().to_string();
    for (var, platform) in [
        ("HIPFILE_HIP_LIBRARY", "amd"),
        ("HIPFILE_CUDA_LIBRARY", "nvidia"),
        ("HIPFILE_CUFILE_LIBRARY", "nvidia"),
    ] {
        let marker = sb.path(&format!("marker-{var}"));
        let log = sb.path(&format!("log-{var}"));
        let env = [
            (var, evil.as_str()),
            ("HIPFILE_PLATFORM", platform),
            ("EVIL_MARKER", marker.to_str().unwrap()),
            ("HIPFILE_LOG_FILE", log.to_str().unwrap()),
            ("HIPFILE_LOG", "info"),
        ];
        let out = output(command(Some("nobody"), &suid, &["open"], &env));
        let text = stdout(&out);
        if !text.starts_with("uid=65534 euid=0 secure=1\n") {
            skipped(&format!(
                "setuid_program_ignores_library_and_log_variables: the set-user-ID bit had no effect here ({text:?})"
            ));
            return;
        }
        assert!(text.contains("open=0\n"), "{text}");
        // Nor is the ignored log file reported as hipFileParamEnvLogfilePath.
        assert!(text.contains("\nlogfile=0 \n"), "{text}");
        assert!(
            !marker.exists(),
            "{var}: the set-user-ID program loaded {evil}: {}",
            std::fs::read_to_string(&marker).unwrap()
        );
        assert!(!log.exists(), "HIPFILE_LOG_FILE was used");
        let err = stderr(&out);
        assert_eq!(
            err.matches("secure-execution mode").count(),
            1,
            "said once: {err}"
        );
        assert!(
            err.contains(&format!("ignoring {var}, HIPFILE_LOG_FILE, as every variable that names a library, a file or a directory")),
            "{err}"
        );

        // The same program, not set-user-ID: the variables work (so the test can fail).
        let out = output(command(None, &probe.exe, &["open"], &env));
        assert!(stdout(&out).starts_with("uid=0 euid=0 secure=0\n"));
        assert!(
            stdout(&out).contains(&format!("\nlogfile=0 {}\n", log.display())),
            "the parameter reports HIPFILE_LOG_FILE outside secure-execution mode: {}",
            stdout(&out)
        );
        assert_eq!(
            std::fs::read_to_string(&marker).unwrap(),
            "loaded with euid 0\n",
            "{var} is used outside secure-execution mode"
        );
        assert!(log.exists());
    }
}

#[test]
fn setuid_cufile_ignores_its_path_variables() {
    let sb = require_root!("cufile-env");
    let probe = Probe::build(&sb);
    let suid = probe.setuid_copy(&sb);
    let json_logs = sb.path("jsonlogs");
    let cwd = sb.path("cwd");
    std::fs::create_dir(&json_logs).unwrap();
    std::fs::create_dir(&cwd).unwrap();
    let json = sb.path("cufile.json");
    std::fs::write(
        &json,
        format!(
            "{{ \"logging\": {{ \"dir\": \"{}\" }} }}",
            json_logs.display()
        ),
    )
    .unwrap();
    let env_log = sb.path("cufile-env.log");
    let lib = probe.cufile.to_str().unwrap();
    let base = [
        ("CUFILE_LOGGING_LEVEL", "TRACE"),
        ("CUFILE_ENV_PATH_JSON", json.to_str().unwrap()),
    ];
    let with_path = [
        base[0],
        base[1],
        ("CUFILE_LOGFILE_PATH", env_log.to_str().unwrap()),
    ];
    let run = |exe: &Path, user: Option<&str>, env: &[(&str, &str)]| {
        let mut cmd = command(user, exe, &["cufile", lib], env);
        cmd.current_dir(&cwd);
        output(cmd)
    };

    let out = run(&suid, Some("nobody"), &with_path);
    let text = stdout(&out);
    if !text.starts_with("uid=65534 euid=0 secure=1\n") {
        skipped(&format!(
            "setuid_cufile_ignores_its_path_variables: the set-user-ID bit had no effect here ({text:?})"
        ));
        return;
    }
    assert!(text.contains("cufile open=0\n"), "{text}");
    // CUFILE_PARAM_ENV_LOGFILE_PATH answers as if CUFILE_LOGFILE_PATH were unset.
    assert!(text.contains("\ncufile logfile=5022 \n"), "{text}");
    for p in [
        &env_log,
        &json_logs.join("cufile.log"),
        &cwd.join("cufile.log"),
    ] {
        assert!(!p.exists(), "{} was written", p.display());
    }
    let err = stderr(&out);
    // Said once (libhipfile, with none of its own variables set, says it at info level).
    assert_eq!(err.matches("secure-execution mode").count(), 1, "{err}");
    assert!(
        err.contains("libcufile.so.0 (hipfile): secure-execution mode (a set-user-ID, set-group-ID or file-capability program): ignoring CUFILE_ENV_PATH_JSON, CUFILE_LOGFILE_PATH, as every variable that names a file"),
        "{err}"
    );
    // Without CUFILE_LOGFILE_PATH either: the working directory is not used.
    run(&suid, Some("nobody"), &base);
    assert!(!cwd.join("cufile.log").exists());
    assert!(!json_logs.join("cufile.log").exists());

    // Not set-user-ID: CUFILE_LOGFILE_PATH, then the configuration file's directory, are used.
    let out = run(&probe.exe, None, &with_path);
    assert!(
        env_log.exists(),
        "CUFILE_LOGFILE_PATH is used outside secure-execution mode"
    );
    assert!(
        stdout(&out).contains(&format!("\ncufile logfile=0 {}\n", env_log.display())),
        "and reported: {}",
        stdout(&out)
    );
    run(&probe.exe, None, &base);
    assert!(
        json_logs.join("cufile.log").exists(),
        "and CUFILE_ENV_PATH_JSON"
    );
}

// ---- cuFile's log in a directory others can write ---------------------------------------------

#[test]
fn cufile_log_does_not_follow_a_planted_symlink() {
    let sb = Sandbox::new("cufile-link", false).expect("a scratch directory");
    let probe = Probe::build(&sb);
    let cwd = sb.path("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let victim = sb.path("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::os::unix::fs::symlink(&victim, cwd.join("cufile.log")).unwrap();
    let mut cmd = command(
        None,
        &probe.exe,
        &["cufile", probe.cufile.to_str().unwrap()],
        &[("CUFILE_LOGGING_LEVEL", "TRACE")],
    );
    cmd.current_dir(&cwd);
    let out = output(cmd);
    assert!(stdout(&out).contains("cufile open=0\n"));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let err = stderr(&out);
    assert_eq!(
        err.matches("libcufile.so.0 (hipfile): cuFile's log \"cufile.log\" is not used: it is a symbolic link, which is never followed; logging to standard error").count(),
        1,
        "{err}"
    );
    assert!(
        err.contains("TRACE") || err.contains("NOTICE"),
        "the log lines went to standard error: {err}"
    );
}

#[test]
fn cufile_log_does_not_block_on_a_planted_fifo() {
    let sb = Sandbox::new("cufile-fifo", false).expect("a scratch directory");
    let probe = Probe::build(&sb);
    let cwd = sb.path("cwd");
    std::fs::create_dir(&cwd).unwrap();
    let fifo = CString::new(cwd.join("cufile.log").as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o666) }, 0);
    let mut cmd = command(
        None,
        &probe.exe,
        &["cufile", probe.cufile.to_str().unwrap()],
        &[("CUFILE_LOGGING_LEVEL", "TRACE")],
    );
    cmd.current_dir(&cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the process hangs opening the FIFO planted as cufile.log");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert!(stdout(&out).contains("cufile open=0\n"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "cuFile's log \"cufile.log\" is not used: it is a FIFO without a reader, or a socket"
        ),
        "{}",
        stderr(&out)
    );
}

// ---- descriptors ------------------------------------------------------------------------------

child_test!(every_descriptor_the_library_opens_is_close_on_exec, {
    use common::*;
    let before = open_fds();
    let log = scratch_file("cloexec-log");
    std::env::set_var("HIPFILE_LOG_FILE", &log);
    // The statistics block and its server (memfd, socket, eventfd), the log file, the driver.
    let mut l1 = std::mem::MaybeUninit::<hipFileStatsLevel1_t>::zeroed();
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { hipFileGetStatsL1(l1.as_mut_ptr()) }, OK);
    open_driver();
    // A registered file: the library's own descriptor and its O_DIRECT twin.
    let file = TestFile::rw("cloexec", &pattern(1 << 16, 1));
    // The statistics client of this very process: a pidfd and the received memfd.
    let ctx = common::stats_ctx::Ctx::create(std::process::id() as i32);
    assert_eq!(ctx.connect(), hipFileStatsSuccess);
    let new: Vec<i32> = open_fds()
        .into_iter()
        .filter(|fd| !before.contains(fd) && *fd != file.fd)
        .collect();
    let mut leaking = Vec::new();
    for &fd in &new {
        // SAFETY: F_GETFD on a descriptor number; a closed one answers -1.
        let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
        if flags >= 0 && flags & libc::FD_CLOEXEC == 0 {
            let what = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap_or_default();
            leaking.push(format!("{fd} -> {}", what.display()));
        }
    }
    assert!(new.len() >= 7, "the library opened {new:?}");
    assert_eq!(leaking, Vec::<String>::new(), "not close-on-exec");
    drop(ctx);
    drop(file);
    let _ = std::fs::remove_file(&log);
});
