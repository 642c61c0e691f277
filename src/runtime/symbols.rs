//! The one symbol-loading helper of the runtime loaders: a required symbol fails its
//! runtime's load with the symbol's name, an optional one is `None`.

use libloading::os::unix::Library;

/// Resolve a required symbol of a runtime or fail its load with the symbol's name.
pub(super) fn sym<T: Copy>(lib: &Library, name: &str) -> Result<T, String> {
    let cname = format!("{name}\0");
    // SAFETY: the caller chooses `T` as the documented C signature of `name`.
    unsafe { lib.get::<T>(cname.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("{name} missing: {e}"))
}

/// Resolve an optional symbol (`None` when the runtime lacks it).
pub(super) fn opt_sym<T: Copy>(lib: &Library, name: &str) -> Option<T> {
    sym(lib, name).ok()
}
