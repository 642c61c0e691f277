//! cuFile's error values (`CUfileOpError`) and their names: what the cuFile face returns and
//! what the fault settings accept by name. Below both, so that neither imports the other; the
//! values and names themselves are `cufile_abi`'s, defined once for the workspace.

use std::ffi::c_int;

/// `CUfileOpError` values.
pub use cufile_abi::code;

/// The `CUfileOpError` value named `name` (`"CU_FILE_HANDLE_NOT_REGISTERED"`).
pub fn error_by_name(name: &str) -> Option<c_int> {
    let short = name.strip_prefix("CU_FILE_")?;
    code::ALL.iter().find(|(n, _)| *n == short).map(|&(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_values_round_trip() {
        assert_eq!(error_by_name("CU_FILE_HANDLE_NOT_REGISTERED"), Some(5027));
        assert_eq!(error_by_name("HANDLE_NOT_REGISTERED"), None);
        assert_eq!(error_by_name("CU_FILE_INTERNAL_ERROR"), Some(5030));
        assert_eq!(error_by_name("CU_FILE_NO_SUCH_ERROR"), None);
    }
}
