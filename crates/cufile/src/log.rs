//! cuFile's log: `cufile.log` with cuFile's level names and location rules.
//!
//! Where: `$CUFILE_LOGFILE_PATH` when set (an empty value means no log file), else
//! `<logging.dir>/cufile.log` when the configuration names a directory, else `cufile.log` in
//! the working directory. The file is created only when a message at or above the level
//! (`CUFILE_LOGGING_LEVEL`, else `logging.level`, else ERROR) is written, so the common run
//! leaves nothing behind. The engine's own log (HIPFILE_LOG, HIPFILE_LOG_FILE) is separate.
//!
//! In secure-execution mode neither `CUFILE_LOGFILE_PATH` nor the working directory is used
//! (the caller chose both): only a directory the API or `/etc/cufile.json` names.

use std::io::Write;
use std::sync::Mutex;

use crate::config;

/// cuFile's levels, least severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Notice,
    Warn,
    Error,
}

impl Level {
    /// A level name, case-insensitive; `None` for anything else.
    pub fn parse(s: &str) -> Option<Level> {
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

struct State {
    level: Level,
    /// `None`: no file at all.
    path: Option<String>,
    file: Option<std::fs::File>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

fn initial() -> State {
    let level = std::env::var("CUFILE_LOGGING_LEVEL")
        .ok()
        .and_then(|v| Level::parse(&v))
        .unwrap_or(Level::Error);
    let path = match config::path_var("CUFILE_LOGFILE_PATH") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(p),
        // The working directory is the caller's choice: not for a set-user-ID program.
        None if config::secure_execution() => None,
        None => Some("cufile.log".to_string()),
    };
    State {
        level,
        path,
        file: None,
    }
}

/// Apply the configuration file's `logging.level` and `logging.dir` (the environment keeps
/// precedence over both).
pub fn configure(level: Option<&str>, dir: Option<&str>) {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let s = g.get_or_insert_with(initial);
    if std::env::var_os("CUFILE_LOGGING_LEVEL").is_none() {
        if let Some(l) = level.and_then(Level::parse) {
            s.level = l;
        }
    }
    if config::path_var("CUFILE_LOGFILE_PATH").is_none() {
        if let Some(d) = dir.filter(|d| !d.is_empty()) {
            let p = format!("{}/cufile.log", d.trim_end_matches('/'));
            if s.path.as_deref() != Some(&p) {
                s.path = Some(p);
                s.file = None;
            }
        }
    }
}

/// A level set through `cuFileSetParameterString` (it takes precedence over the environment);
/// an unknown name leaves the level as it is.
pub fn set_level(level: &str) {
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
pub fn level_name() -> &'static str {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    g.get_or_insert_with(initial).level.name()
}

fn write(level: Level, msg: &str) -> bool {
    let mut g = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let s = g.get_or_insert_with(initial);
    if level < s.level {
        return false;
    }
    let Some(path) = s.path.clone() else {
        return false;
    };
    if s.file.is_none() {
        s.file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .ok();
    }
    let Some(f) = s.file.as_mut() else {
        return false;
    };
    let line = format!(
        " {} [pid={} tid={}] {:<7} cufile(hipfile) {msg}\n",
        timestamp(),
        std::process::id(),
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() },
        level.name()
    );
    f.write_all(line.as_bytes()).is_ok()
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

pub fn error(msg: &str) {
    write(Level::Error, msg);
}

pub fn warn(msg: &str) {
    write(Level::Warn, msg);
}

pub fn notice(msg: &str) {
    write(Level::Notice, msg);
}

pub fn info(msg: &str) {
    write(Level::Info, msg);
}

/// A warning nobody should miss: the log and standard error.
pub fn warn_always(msg: &str) {
    write(Level::Warn, msg);
    eprintln!("libcufile.so.0 (hipfile): {msg}");
}

/// An error nobody should miss (the engine is missing): the log and standard error.
pub fn error_always(msg: &str) {
    write(Level::Error, msg);
    eprintln!("libcufile.so.0 (hipfile): {msg}");
}
