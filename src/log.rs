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
        let filter = std::env::var("HIPFILE_LOG").unwrap_or_else(|_| "warn".to_string());
        let filter = tracing_subscriber::EnvFilter::try_new(&filter)
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
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
        if let Some(msg) = refused {
            tracing::warn!(target: "hipfile", "{msg}");
        }
        say_secure_execution();
    });
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
