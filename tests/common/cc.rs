//! Building C (and C++) programs: the one compile line of the tests' C programs ([`CProgram`]),
//! the directory that gives the library under test its installed names ([`lib_dir`]), and for
//! the header tests running a compiler and showing what it printed.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub use super::programs::text;
use super::{deps_dir, hipsim_path, libhipfile_path};
pub use super::{out_dir, repo_root as root};

/// `$CC`, else `cc`.
pub fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".to_string())
}

/// A directory holding `libhipfile.so.0` (the SONAME programs ask for) and `libhipfile.so`
/// (what `-lhipfile` finds), both links to the library under test (cargo builds only
/// `deps/libhipfile.so`), as an installation provides them. Made once per test process; each
/// link is replaced atomically, so that other test processes using it never miss it.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = out_dir("libhipfile");
        for name in ["libhipfile.so", "libhipfile.so.0"] {
            let tmp = dir.join(format!("{name}.{}", std::process::id()));
            let _ = std::fs::remove_file(&tmp);
            std::os::unix::fs::symlink(libhipfile_path(), &tmp).unwrap();
            std::fs::rename(&tmp, dir.join(name)).unwrap();
        }
        dir
    })
}

/// A C program of the tests, compiled with
/// `$CC -std=c11 -Wall -Wextra -Werror FLAGS SOURCE -o EXE LIBRARIES` by [`CProgram::build`].
pub struct CProgram {
    source: PathBuf,
    exe: PathBuf,
    flags: Vec<OsString>,
    libraries: Vec<OsString>,
}

impl CProgram {
    /// `source` (a path under the repository, or any other), to be built as `exe`.
    pub fn new(source: impl AsRef<Path>, exe: impl AsRef<Path>) -> CProgram {
        let source = source.as_ref();
        CProgram {
            source: if source.is_absolute() {
                source.to_path_buf()
            } else {
                root().join(source)
            },
            exe: exe.as_ref().to_path_buf(),
            flags: Vec::new(),
            libraries: Vec::new(),
        }
    }

    /// Compiler flags (before the source).
    pub fn flags<S: AsRef<OsStr>>(mut self, flags: impl IntoIterator<Item = S>) -> CProgram {
        self.flags
            .extend(flags.into_iter().map(|f| f.as_ref().to_owned()));
        self
    }

    /// Our headers: `-I include/`.
    pub fn headers(self) -> CProgram {
        let include = root().join("include");
        self.flags([OsStr::new("-I"), include.as_os_str()])
    }

    /// Libraries and linker flags (after the source, where the linker needs them).
    pub fn link<S: AsRef<OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> CProgram {
        self.libraries
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Linked with the library under test, found at run time in [`lib_dir`].
    pub fn hipfile(self) -> CProgram {
        let dir = lib_dir();
        self.link([
            format!("-L{}", dir.display()),
            "-lhipfile".to_string(),
            format!("-Wl,-rpath,{}", dir.display()),
        ])
    }

    /// Linked with the simulated runtime too (the programs call HIP functions themselves), the
    /// copy cargo built next to the tests.
    pub fn hipsim(self) -> CProgram {
        let _ = hipsim_path(); // asserts it was built
        let deps = deps_dir();
        self.link([
            format!("-L{}", deps.display()),
            "-lhipsim".to_string(),
            "-pthread".to_string(),
            format!("-Wl,-rpath,{}", deps.display()),
        ])
    }

    /// Compile; panics unless the compiler succeeds without printing anything. The program is
    /// written under a private name and renamed into place: another test process running the
    /// same program never sees a partial file. Returns the executable.
    pub fn build(self) -> PathBuf {
        let mut tmp = self.exe.clone().into_os_string();
        tmp.push(format!(".{}.tmp", std::process::id()));
        let mut command = Command::new(cc());
        command
            .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
            .args(&self.flags)
            .arg(&self.source)
            .arg("-o")
            .arg(&tmp)
            .args(&self.libraries);
        let out = run(command);
        assert!(
            out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
            "compiling {} failed or warned ({}):\n{}",
            self.source.display(),
            out.status,
            text(&out)
        );
        std::fs::rename(&tmp, &self.exe).unwrap();
        self.exe
    }
}

/// Run `command` (printing it), panicking only when it cannot be started.
pub fn run(mut command: Command) -> Output {
    println!("running: {command:?}");
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?} (a C/C++ toolchain is required): {e}"))
}

/// Build `source` (a path under the repository) with `build`, which writes `exe`; run `exe`
/// and expect it to succeed printing exactly `expected`.
pub fn build_and_run(build: Command, source: &str, exe: &Path, expected: &str) {
    let built = run(build);
    assert!(
        built.status.success(),
        "{source} does not compile ({}):\n{}",
        built.status,
        text(&built)
    );
    let ran = run(Command::new(exe));
    assert!(
        ran.status.success(),
        "{} failed ({}):\n{}",
        exe.display(),
        ran.status,
        text(&ran)
    );
    assert_eq!(String::from_utf8_lossy(&ran.stdout), expected);
}
