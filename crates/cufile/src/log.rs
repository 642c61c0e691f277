//! cuFile's log: `cufile.log` with cuFile's level names and location rules.
//!
//! Where: `$CUFILE_LOGFILE_PATH` when set (an empty value means no log file), else
//! `<logging.dir>/cufile.log` when the configuration names a directory, else `cufile.log` in
//! the working directory. The file is created only when a message at or above the level
//! (`CUFILE_LOGGING_LEVEL`, else `logging.level`, else ERROR) is written, so the common run
//! leaves nothing behind. The engine's own log (HIPFILE_LOG, HIPFILE_LOG_FILE) is separate.
//!
//! The working directory may be one that other users can write (`/tmp`), so the file is
//! opened as [`open_append`] says: never through a final symbolic link, created 0600, never
//! blocking on a FIFO, and only a regular file of our own user with one link (or a character
//! device). A file it refuses means standard error instead, with one warning. In
//! secure-execution mode neither `CUFILE_LOGFILE_PATH` nor the working directory is used (the
//! caller chose both): only a directory the API or `/etc/cufile.json` names.

use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::Mutex;

use crate::env;

/// cuFile's levels, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Trace,
    Debug,
    Info,
    Notice,
    Warn,
    Error,
}

impl Level {
    /// A level name, case-insensitive; `None` for anything else.
    pub(crate) fn parse(s: &str) -> Option<Level> {
        Some(match s.trim().to_ascii_uppercase().as_str() {
            "TRACE" => Level::Trace,
            "DEBUG" => Level::Debug,
            "INFO" => Level::Info,
            "NOTICE" => Level::Notice,
            "WARN" | "WARNING" => Level::Warn,
            "ERROR" => Level::Error,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Notice => "NOTICE",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }
}

/// Where the lines go once the first one is written.
enum Sink {
    File(std::fs::File),
    /// The log file was refused (said once).
    Stderr,
}

struct State {
    level: Level,
    /// `None`: no file at all.
    path: Option<String>,
    sink: Option<Sink>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn initial() -> State {
    let level = std::env::var("CUFILE_LOGGING_LEVEL")
        .ok()
        .and_then(|v| Level::parse(&v))
        .unwrap_or(Level::Error);
    let path = match env::path_var("CUFILE_LOGFILE_PATH") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(p),
        // The working directory is the caller's choice: not for a set-user-ID program.
        None if env::secure_execution() => None,
        None => Some("cufile.log".to_string()),
    };
    State {
        level,
        path,
        sink: None,
    }
}

/// Open `path` to append log lines: created with mode 0600; never through a symbolic link at
/// the final component (`O_NOFOLLOW`); never blocking (`O_NONBLOCK`, cleared once accepted: a
/// FIFO without a reader fails instead of hanging); close-on-exec. What opens must be a regular
/// file of our effective user with a single link (not a hard link planted to another file),
/// or a character device (`/dev/null`, a terminal). The same rules as libhipfile's log file
/// (its `sys::log_file`), which this library cannot call.
fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    use std::io::{Error, ErrorKind};
    let file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                Error::new(e.kind(), "it is a symbolic link, which is never followed")
            }
            Some(libc::ENXIO) => Error::new(e.kind(), "it is a FIFO without a reader, or a socket"),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if meta.file_type().is_file() {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        if meta.uid() != euid {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                format!(
                    "it belongs to user {} (this process runs as user {euid})",
                    meta.uid()
                ),
            ));
        }
        if meta.nlink() != 1 {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                format!("it has {} hard links", meta.nlink()),
            ));
        }
    } else if !meta.file_type().is_char_device() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "it is neither a regular file nor a character device",
        ));
    }
    let fd = file.as_raw_fd();
    // SAFETY: F_GETFL/F_SETFL take integer arguments on our own descriptor.
    let rc = unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 {
            flags
        } else {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK)
        }
    };
    if rc < 0 {
        return Err(Error::last_os_error());
    }
    Ok(file)
}

/// Apply the configuration file's `logging.level` and `logging.dir` (the environment keeps
/// precedence over both).
pub(crate) fn configure(level: Option<&str>, dir: Option<&str>) {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let s = g.get_or_insert_with(initial);
    if std::env::var_os("CUFILE_LOGGING_LEVEL").is_none() {
        if let Some(l) = level.and_then(Level::parse) {
            s.level = l;
        }
    }
    if env::path_var("CUFILE_LOGFILE_PATH").is_none() {
        if let Some(d) = dir.filter(|d| !d.is_empty()) {
            let p = format!("{}/cufile.log", d.trim_end_matches('/'));
            if s.path.as_deref() != Some(&p) {
                s.path = Some(p);
                s.sink = None;
            }
        }
    }
}

/// A level set through `cuFileSetParameterString` (it takes precedence over the environment);
/// an unknown name leaves the level as it is.
pub(crate) fn set_level(level: &str) {
    if let Some(l) = Level::parse(level) {
        let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
        g.get_or_insert_with(initial).level = l;
    } else {
        warn(&format!(
            "logging level {level:?} is not a cuFile level: ignored"
        ));
    }
}

/// The level in force (as cuFile names it).
pub(crate) fn level_name() -> &'static str {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(initial).level.name()
}

/// Write one line if its level is on; true when it went to standard error (the file was
/// refused), so that the `*_always` functions do not print it twice.
fn write(level: Level, msg: &str) -> bool {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let s = g.get_or_insert_with(initial);
    if level < s.level {
        return false;
    }
    let Some(path) = s.path.clone() else {
        return false;
    };
    if s.sink.is_none() {
        s.sink = Some(match open_append(Path::new(&path)) {
            Ok(f) => Sink::File(f),
            Err(e) => {
                eprintln!("libcufile.so.0 (hipfile): cuFile's log {path:?} is not used: {e}; logging to standard error");
                Sink::Stderr
            }
        });
    }
    let line = format!(
        " {} [pid={} tid={}] {:<7} cufile(hipfile) {msg}\n",
        timestamp(),
        std::process::id(),
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() },
        level.name()
    );
    match s.sink.as_mut() {
        Some(Sink::File(f)) => {
            let _ = f.write_all(line.as_bytes());
            false
        }
        Some(Sink::Stderr) => {
            let _ = std::io::stderr().write_all(line.as_bytes());
            true
        }
        None => false,
    }
}

/// `DD-MM-YYYY HH:MM:SS:mmm`, local time.
fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as libc::time_t;
    // SAFETY: `tm` is plain data; localtime_r fills it from a valid time value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::localtime_r(&secs, &mut tm) };
    format!(
        "{:02}-{:02}-{:04} {:02}:{:02}:{:02}:{:03}",
        tm.tm_mday,
        tm.tm_mon + 1,
        tm.tm_year + 1900,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        now.subsec_millis()
    )
}

pub(crate) fn error(msg: &str) {
    write(Level::Error, msg);
}

pub(crate) fn warn(msg: &str) {
    write(Level::Warn, msg);
}

pub(crate) fn notice(msg: &str) {
    write(Level::Notice, msg);
}

pub(crate) fn info(msg: &str) {
    write(Level::Info, msg);
}

/// A warning nobody should miss: the log and standard error.
pub(crate) fn warn_always(msg: &str) {
    if !write(Level::Warn, msg) {
        eprintln!("libcufile.so.0 (hipfile): {msg}");
    }
}

/// An error nobody should miss (the engine is missing): the log and standard error.
pub(crate) fn error_always(msg: &str) {
    if !write(Level::Error, msg) {
        eprintln!("libcufile.so.0 (hipfile): {msg}");
    }
}
