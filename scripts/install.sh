#!/usr/bin/env bash
# Install libhipfile without cargo-c: the same tree as `cargo cinstall --release --prefix PREFIX`
# (minus the static library):
#
#   PREFIX/LIBDIR/libhipfile.so.0.5.0       the library (SONAME libhipfile.so.0)
#   PREFIX/LIBDIR/libhipfile.so.0 -> libhipfile.so.0.5.0
#   PREFIX/LIBDIR/libhipfile.so   -> libhipfile.so.0.5.0
#   PREFIX/include/hipfile.h, PREFIX/include/hipfile-stats.h
#   PREFIX/LIBDIR/pkgconfig/hipfile.pc       (Name hipfile, Version 0.5.0, Libs -lhipfile)
#   PREFIX/share/man/man1/hipfile.1, hipfile-{check,cp,bench,stats}.1   (from doc/man/)
#   PREFIX/LIBDIR/libcufile.so.0            NVIDIA's cuFile C ABI on the same engine (crates/cufile;
#   PREFIX/LIBDIR/libcufile.so -> libcufile.so.0     SONAME libcufile.so.0; it finds
#   PREFIX/include/cufile.h                          libhipfile.so.0 in its own directory)
# and with --tool:
#   PREFIX/bin/hipfile                      the tool
#   PREFIX/libexec/hipfile/libhipsim.so     the simulated GPU runtime, where `hipfile --sim`
#                                           finds it (test and demo only; out of the loader's way)
#
# Usage: scripts/install.sh [--lib PATH] [--cufile-lib PATH] [--libdir DIR] [--tool]
#                           [--debug-info] PREFIX
#   --lib PATH    install this already-built libhipfile.so instead of building one
#                 (`cargo build --release --locked -p hipfile` otherwise)
#   --cufile-lib PATH  install this already-built libcufile.so; the default is the libcufile.so
#                 next to --lib's file when there is one, else `cargo build --release --locked
#                 -p hipfile-cufile`
#   --libdir DIR  library directory relative to PREFIX; the default is cargo-c's: lib/<multiarch>
#                 on Debian and derivatives (dpkg-architecture), else lib64 where /usr/lib64 is a
#                 real directory, else lib
#   --tool        also install the `hipfile` tool and the simulated GPU runtime: the hipfile
#                 executable next to --lib's file or in the folder above it (cargo's
#                 target/PROFILE/deps/..), with the libhipsim.so beside it or in its deps/
#                 folder; when there is none, `cargo build --release --locked -p hipfile-cli
#                 -p hipsim` builds them. Nothing is fetched when the build is already there
#                 (a build with --locked never updates the crates.io index).
#   --debug-info  install the binaries as built, with their symbols and debug information
#                 (for packagers who split the debug information off themselves); by default
#                 every installed executable and library is stripped with
#                 `${STRIP:-strip} --strip-unneeded`
# DESTDIR, when set, is put in front of every installed path (staged installs for packaging);
# hipfile.pc still names PREFIX. STRIP names the strip program (cross builds).
#
# With cargo-c (`cargo install cargo-c --version 0.10.24 --locked` on Rust 1.95),
# `cargo cinstall --release --prefix PREFIX` installs the same library, headers, hipfile.pc and
# manual pages from the [package.metadata.capi] sections of Cargo.toml; the tool then with
#   cargo install --path crates/hipfile-cli --root PREFIX     (PREFIX/bin/hipfile; --sim then
#   needs --sim=PATH, or libhipsim.so copied to PREFIX/libexec/hipfile/)
set -euo pipefail

usage() {
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2
    exit 2
}

root=$(cd "$(dirname "$0")/.." && pwd)
lib=""
cufile_lib=""
libdir=""
tool=0
debug_info=0
prefix=""
while [ $# -gt 0 ]; do
    case "$1" in
        --lib) [ $# -ge 2 ] || usage; lib=$2; shift 2 ;;
        --lib=*) lib=${1#--lib=}; shift ;;
        --cufile-lib) [ $# -ge 2 ] || usage; cufile_lib=$2; shift 2 ;;
        --cufile-lib=*) cufile_lib=${1#--cufile-lib=}; shift ;;
        --libdir) [ $# -ge 2 ] || usage; libdir=$2; shift 2 ;;
        --libdir=*) libdir=${1#--libdir=}; shift ;;
        --tool) tool=1; shift ;;
        --debug-info) debug_info=1; shift ;;
        -h|--help) usage ;;
        -*) echo "install.sh: unknown option $1" >&2; usage ;;
        *) [ -z "$prefix" ] || usage; prefix=$1; shift ;;
    esac
done
[ -n "$prefix" ] || usage
if [ -z "$libdir" ]; then
    # cargo-c's default, so that both installs give the same tree.
    if [ -f /etc/debian_version ] && multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null) \
        && [ -n "$multiarch" ]; then
        libdir="lib/$multiarch"
    elif [ -d /usr/lib64 ] && [ ! -L /usr/lib64 ]; then
        libdir="lib64"
    else
        libdir="lib"
    fi
fi
case "$libdir" in
    /*) echo "install.sh: --libdir is relative to PREFIX" >&2; exit 2 ;;
esac

# hipfile.pc needs an absolute prefix.
case "$prefix" in
    /*) ;;
    *) prefix="$(pwd)/$prefix" ;;
esac
prefix=${prefix%/}
[ -n "$prefix" ] || prefix=/

# The API level the header declares (and hipFileGetVersion returns), not the crate version.
header="$root/include/hipfile.h"
ver() { sed -n "s/^#define HIPFILE_VERSION_$1 \([0-9][0-9]*\).*/\1/p" "$header"; }
version="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"
major=$(ver MAJOR)
case "$version" in
    [0-9]*.[0-9]*.[0-9]*) ;;
    *) echo "install.sh: cannot read HIPFILE_VERSION_* from $header" >&2; exit 1 ;;
esac
real="libhipfile.so.$version"
soname="libhipfile.so.$major"

if [ -z "$lib" ]; then
    echo "install.sh: building the library (cargo build --release -p hipfile)"
    (cd "$root" && cargo build --release --locked -p hipfile --lib)
    lib="${CARGO_TARGET_DIR:-$root/target}/release/libhipfile.so"
fi
if [ ! -f "$lib" ]; then
    echo "install.sh: $lib does not exist" >&2
    exit 1
fi
if [ -z "$cufile_lib" ]; then
    if [ -f "$(dirname "$lib")/libcufile.so" ]; then
        cufile_lib="$(dirname "$lib")/libcufile.so"
    else
        echo "install.sh: building libcufile (cargo build --release -p hipfile-cufile)"
        (cd "$root" && cargo build --release --locked -p hipfile-cufile --lib)
        cufile_lib="${CARGO_TARGET_DIR:-$root/target}/release/libcufile.so"
    fi
fi
if [ ! -f "$cufile_lib" ]; then
    echo "install.sh: $cufile_lib does not exist" >&2
    exit 1
fi

# The tool and the simulated runtime: built beside --lib's file, else built now.
tool_bin=""
sim_lib=""
if [ "$tool" = 1 ]; then
    if [ -n "$lib" ]; then
        for d in "$(dirname "$lib")" "$(dirname "$lib")/.."; do
            if [ -f "$d/hipfile" ] && [ -x "$d/hipfile" ]; then
                tool_bin="$d/hipfile"
                break
            fi
        done
    fi
    if [ -z "$tool_bin" ]; then
        echo "install.sh: building the hipfile tool and the simulator (cargo build --release --locked -p hipfile-cli -p hipsim)"
        (cd "$root" && cargo build --release --locked -p hipfile-cli -p hipsim)
        tool_bin="${CARGO_TARGET_DIR:-$root/target}/release/hipfile"
    fi
    # Where the tool itself looks for it in a build tree.
    for s in "$(dirname "$tool_bin")/libhipsim.so" "$(dirname "$tool_bin")/deps/libhipsim.so"; do
        if [ -f "$s" ]; then
            sim_lib="$s"
            break
        fi
    done
    if [ ! -f "$tool_bin" ] || [ -z "$sim_lib" ]; then
        echo "install.sh: no hipfile executable with libhipsim.so beside it (${tool_bin:-none});" \
            "build them with cargo build --release --locked -p hipfile-cli -p hipsim" >&2
        exit 1
    fi
fi

# Installed executables and libraries are stripped unless --debug-info.
strip_prog=${STRIP:-strip}
if [ "$debug_info" = 0 ] && ! command -v "$strip_prog" >/dev/null 2>&1; then
    echo "install.sh: $strip_prog not found: set STRIP to the strip program, or give" \
        "--debug-info to install the binaries unstripped" >&2
    exit 1
fi
# install_bin SRC DST: an executable or shared library, stripped unless --debug-info.
install_bin() {
    install -m 0755 "$1" "$2"
    if [ "$debug_info" = 0 ]; then
        "$strip_prog" --strip-unneeded "$2"
    fi
}

# The run-time loader finds the library by its SONAME: it must be the link we make.
if command -v readelf >/dev/null 2>&1; then
    got=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
    if [ "$got" != "$soname" ]; then
        echo "install.sh: $lib has SONAME '${got:-none}', expected $soname" >&2
        exit 1
    fi
    got=$(readelf -d "$cufile_lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
    if [ "$got" != "libcufile.so.0" ]; then
        echo "install.sh: $cufile_lib has SONAME '${got:-none}', expected libcufile.so.0" >&2
        exit 1
    fi
fi

dest="${DESTDIR:-}$prefix"
install -d "$dest/$libdir" "$dest/$libdir/pkgconfig" "$dest/include"
install_bin "$lib" "$dest/$libdir/$real"
ln -sfn "$real" "$dest/$libdir/$soname"
ln -sfn "$real" "$dest/$libdir/libhipfile.so"
install -m 0644 "$root/include/hipfile.h" "$root/include/hipfile-stats.h" "$dest/include/"
# libcufile.so.0 finds libhipfile.so.0 in its own directory.
install_bin "$cufile_lib" "$dest/$libdir/libcufile.so.0"
ln -sfn libcufile.so.0 "$dest/$libdir/libcufile.so"
install -m 0644 "$root/include/cufile.h" "$dest/include/"
# The tool's manual pages (generated from its command line by `hipfile manpages doc/man`;
# tests/manpages in crates/hipfile-cli fails when they are stale).
install -d "$dest/share/man/man1"
install -m 0644 "$root"/doc/man/*.1 "$dest/share/man/man1/"

cat >"$dest/$libdir/pkgconfig/hipfile.pc" <<EOF
prefix=$prefix
exec_prefix=\${prefix}
libdir=\${prefix}/$libdir
includedir=\${prefix}/include

Name: hipfile
Description: Move file data between storage and GPU memory (AMD hipFile $version C API, Rust implementation)
Version: $version
Libs: -L\${libdir} -lhipfile
Cflags: -I\${includedir}
EOF
chmod 0644 "$dest/$libdir/pkgconfig/hipfile.pc"

echo "installed into $dest:"
echo "  $libdir/$real, $libdir/$soname -> $real, $libdir/libhipfile.so -> $real"
echo "  include/hipfile.h, include/hipfile-stats.h"
echo "  $libdir/libcufile.so.0, $libdir/libcufile.so -> libcufile.so.0, include/cufile.h"
echo "  $libdir/pkgconfig/hipfile.pc"
echo "  share/man/man1/hipfile.1 (and one page per subcommand)"

if [ "$tool" = 1 ]; then
    # `hipfile --sim` looks for the simulator in ../libexec/hipfile/ beside its own folder.
    install -d "$dest/bin" "$dest/libexec/hipfile"
    install_bin "$tool_bin" "$dest/bin/hipfile"
    install_bin "$sim_lib" "$dest/libexec/hipfile/libhipsim.so"
    echo "  bin/hipfile (the tool), libexec/hipfile/libhipsim.so (the simulated GPU runtime for --sim)"
fi
if [ "$debug_info" = 0 ]; then
    echo "  (stripped: $strip_prog --strip-unneeded; --debug-info keeps the symbols)"
fi
