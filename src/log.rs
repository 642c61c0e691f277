//! Logging through `tracing`: to standard error, filtered by `HIPFILE_LOG`
//! (default `warn`), or to the file named by `HIPFILE_LOG_FILE`. Installed once, on the first
//! API call that needs it; if the application already installed a global subscriber, ours is
//! not installed and our events go to theirs. The library never writes into the working
//! directory.
//!
//! The log file is opened as [`crate::sys::log_file`] allows (never through a final symbolic
//! link, created 0600, a regular file of ours or a character device); a file it refuses
//! means standard error and one warning saying why. In secure-execution mode (a set-user-ID,
//! set-group-ID or file-capability program) `HIPFILE_LOG_FILE` is ignored like every variable
//! that names a file, and the first lines say so.
#![deny(unsafe_code)]

use std::path::Path;
use std::sync::Once;

use crate::sys::{log_file, secure};

static INIT: Once = Once::new();

/// Install the subscriber once per process.
pub(crate) fn init() {
    INIT.call_once(|| {
        let (filter, bad_filter) = filter_of(std::env::var("HIPFILE_LOG").ok().as_deref());
        let builder = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_target(false);
        let mut refused = None;
        let file = secure::path_var("HIPFILE_LOG_FILE").and_then(|path| {
            log_file::open_append(Path::new(&path))
                .map_err(|e| {
                    refused = Some(format!(
                        "HIPFILE_LOG_FILE={path:?} is not used: {e}; logging to standard error"
                    ))
                })
                .ok()
        });
        let result = match file {
            Some(file) => builder
                .with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .try_init(),
            None => builder.with_writer(std::io::stderr).try_init(),
        };
        // An application subscriber already in place is fine.
        drop(result);
        for msg in [bad_filter, refused].into_iter().flatten() {
            tracing::warn!(target: "hipfile", "{msg}");
        }
        say_secure_execution();
    });
}

/// Levels `HIPFILE_LOG` may name (any case; `warning` is `warn`).
const LEVELS: [&str; 7] = ["off", "error", "warn", "warning", "info", "debug", "trace"];

/// The filter `HIPFILE_LOG` asks for: unset or empty is `warn`; a level; or `tracing`'s
/// directive syntax (`target=level`, comma-separated). Anything else would parse as the name of
/// a log source and silence every line, errors included: `warn` then, and what to say about it.
fn filter_of(value: Option<&str>) -> (tracing_subscriber::EnvFilter, Option<String>) {
    let warn = || tracing_subscriber::EnvFilter::new("warn");
    let v = value.map(str::trim).unwrap_or("");
    if v.is_empty() {
        return (warn(), None);
    }
    let lower = v.to_ascii_lowercase();
    let text = match lower.as_str() {
        "warning" => Some("warn"),
        l if LEVELS.contains(&l) => Some(l),
        _ if v.contains('=') || v.contains(',') => Some(v),
        _ => None,
    };
    match text.map(tracing_subscriber::EnvFilter::try_new) {
        Some(Ok(f)) => (f, None),
        _ => (
            warn(),
            Some(format!(
                "HIPFILE_LOG={v:?} is neither a level (error, warn, info, debug, trace, off) nor a filter (target=level): logging at warn"
            )),
        ),
    }
}

/// One line when secure-execution mode makes us ignore variables: a warning when some are
/// set (their user expects them to work), else an info line.
fn say_secure_execution() {
    if !secure::secure_execution() {
        return;
    }
    let ignored = secure::ignored_path_variables();
    if ignored.is_empty() {
        tracing::info!(target: "hipfile", "secure-execution mode (a set-user-ID, set-group-ID or file-capability program): variables that name a library, a file or a directory are ignored");
    } else {
        tracing::warn!(
            target: "hipfile",
            "secure-execution mode (a set-user-ID, set-group-ID or file-capability program): ignoring {}, as every variable that names a library, a file or a directory",
            ignored.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::filter_of;

    fn of(v: Option<&str>) -> (String, Option<String>) {
        let (f, complaint) = filter_of(v);
        (f.to_string(), complaint)
    }

    #[test]
    fn the_filter_is_a_level_a_directive_or_warn() {
        assert_eq!(of(None), ("warn".into(), None));
        assert_eq!(of(Some("")), ("warn".into(), None), "empty is unset");
        assert_eq!(of(Some("  ")), ("warn".into(), None));
        assert_eq!(of(Some("warning")), ("warn".into(), None));
        assert_eq!(of(Some("INFO")), ("info".into(), None));
        assert_eq!(of(Some("off")), ("off".into(), None));
        assert_eq!(of(Some("hipfile=debug")), ("hipfile=debug".into(), None));
        assert_eq!(
            of(Some("loud")),
            (
                "warn".into(),
                Some(
                    "HIPFILE_LOG=\"loud\" is neither a level (error, warn, info, debug, trace, \
                     off) nor a filter (target=level): logging at warn"
                        .into()
                )
            )
        );
    }
}
