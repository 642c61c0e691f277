#!/usr/bin/env bash
# Lays out a release build the way the GPU scripts take it (a folder with bin/hipfile and lib/ with
# libhipfile.so.0 and libcufile.so.0, stripped), on the machine that has Rust, so the GPU machine
# needs none. Run from the repository root:
#
#   bash scripts/gpu/stage.sh [--rev REV] [DIR]
#
#   DIR       where the build goes (default .gpu, which the scripts read; it is git-ignored)
#   --rev REV build that commit instead of the working tree, in a detached worktree under
#             target/stage-REV with its own target folder (for `bench.sh --previous`, which runs
#             T1 of two builds in turns)
#
# Prints the commit and the sizes. The folder is what `run`'s carry takes (`.gpu`, `.gpu-prev`).
set -euo pipefail

rev=
dir=.gpu
while [ $# -gt 0 ]; do
    case "$1" in
        --rev) rev=${2:?--rev needs a commit}; shift ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        -*) echo "stage.sh: unknown option $1" >&2; exit 2 ;;
        *) dir=$1 ;;
    esac
    shift
done
[ -f scripts/gpu/stage.sh ] || { echo "stage.sh: run me from the repository root" >&2; exit 2; }

src=.
desc="working tree at $(git rev-parse --short HEAD)$([ -z "$(git status --porcelain)" ] || echo ' (with changes)')"
if [ -n "$rev" ]; then
    commit=$(git rev-parse --verify "$rev^{commit}")
    src=target/stage-${commit:0:12}
    if [ ! -d "$src" ]; then
        git worktree add --detach "$src" "$commit" >/dev/null
    fi
    desc="commit $(git rev-parse --short "$commit")"
fi

(cd "$src" && cargo build --release --workspace --quiet)
rel=$src/target/release
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib"
cp "$rel/hipfile" "$dir/bin/hipfile"
cp "$rel/libhipfile.so" "$dir/lib/libhipfile.so.0"
cp "$rel/libcufile.so" "$dir/lib/libcufile.so.0"
ln -s libhipfile.so.0 "$dir/lib/libhipfile.so"
ln -s libcufile.so.0 "$dir/lib/libcufile.so"
strip "$dir/bin/hipfile" "$dir/lib/libhipfile.so.0" "$dir/lib/libcufile.so.0"
echo "$desc" > "$dir/BUILD"
echo "stage.sh: $dir holds the $desc"
du -b "$dir/bin/hipfile" "$dir/lib/libhipfile.so.0" "$dir/lib/libcufile.so.0" | awk '{printf "  %-32s %6.2f MiB\n", $2, $1 / 1048576}'
