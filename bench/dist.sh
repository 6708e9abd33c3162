#!/usr/bin/env bash
# The distribution: an envbench to copy onto a host that has no Rust, built once with the `dist` profile.
#
# Makes, in $OUT (default dist/):
#   envbench-VERSION-x86_64-linux-gnu.tar.gz        the stripped binary, its README, docs, man pages, completions,
#                                                   licences, third-party licences and the example suites, in one
#                                                   folder (bench/package.sh);
#   envbench-VERSION-x86_64-linux-gnu-debug.tar.gz  envbench.debug, the binary's line tables: unpacked over the same
#                                                   folder it lies beside the binary, where a backtrace finds it
#                                                   (the binary names it in its .gnu_debuglink section);
#   envbench_VERSION_amd64.deb                      the same as a Debian package (bench/package.sh, dpkg-deb), installable
#                                                   with `apt install ./envbench_VERSION_amd64.deb`.
# and prints their sizes, the oldest glibc the binary runs on (the newest GLIBC_ symbol version it needs), then checks
# the package: unpacked into a scratch root (dpkg -x), its envbench must answer --version and run sysinfo with a PATH
# that holds no Rust toolchain, and the tarball and the package must be at most 40 MB (MAX_MB) each.
#
# Usage: bench/dist.sh   Environment: OUT (dist), CARGO_TARGET_DIR (default $HOME/.cache/envbench-target, the bench
#   scripts' build cache), MAX_MB (40), CHECK=0 (skip the checks), BUILD=0 (package the last dist build as it is).
# Needs: objcopy and strip (binutils), dpkg-deb.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${OUT:-dist}
MAX_MB=${MAX_MB:-40}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
VERSION=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "envbench"))')
TRIPLE=x86_64-linux-gnu
NAME="envbench-$VERSION-$TRIPLE"
for tool in objcopy strip objdump dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "dist: $tool is missing (apt-get install binutils dpkg-dev)" >&2; exit 2; }
done
[ "$(uname -m)" = x86_64 ] || { echo "dist: this script packages for x86_64, this host is $(uname -m)" >&2; exit 2; }

if [ "${BUILD:-1}" = 1 ]; then
  echo "dist: cargo build --profile dist -p envbench (the release build with line tables: about 15 minutes on 2 vCPUs)" >&2
  cargo build --locked --profile dist -p envbench
fi
BUILT="$CARGO_TARGET_DIR/dist/envbench"
[ -x "$BUILT" ] || { echo "dist: no $BUILT; run without BUILD=0" >&2; exit 1; }

# Only envbench's own names are replaced in OUT; the stripping and the debug folder happen in a scratch directory.
rm -rf "${OUT:?}/$NAME" "$OUT/$NAME.tar.gz" "$OUT/$NAME-debug.tar.gz" "$OUT/envbench_${VERSION}_amd64.deb"
mkdir -p "$OUT"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
STAGE="$SCRATCH/stage"
mkdir "$STAGE"
# The line tables go to envbench.debug; the binary keeps neither them nor its symbol table, and names the debug file
# (with its CRC) so that a backtrace with RUST_BACKTRACE=1 finds it beside the binary.
objcopy --only-keep-debug "$BUILT" "$STAGE/envbench.debug"
strip --strip-all -o "$STAGE/envbench" "$BUILT"
(cd "$STAGE" && objcopy --add-gnu-debuglink=envbench.debug envbench)
# The tarball's folder and the .deb, each with the docs, man pages, completions and licences (bench/package.sh).
bench/package.sh "$STAGE/envbench" "$OUT"
tar -C "$OUT" -czf "$OUT/$NAME.tar.gz" "$NAME"
mkdir -p "$SCRATCH/debug/$NAME"
cp "$STAGE/envbench.debug" "$SCRATCH/debug/$NAME/"
tar -C "$SCRATCH/debug" -czf "$OUT/$NAME-debug.tar.gz" "$NAME"
DEB="$OUT/envbench_${VERSION}_amd64.deb"
[ -f "$DEB" ] || { echo "dist: bench/package.sh did not write $DEB" >&2; exit 1; }

mb() { awk -v b="$(stat -c %s "$1")" 'BEGIN { printf "%.1f MB", b / 1e6 }'; }
GLIBC=$(objdump -T "$STAGE/envbench" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -n 1)
echo "dist: binary $(mb "$STAGE/envbench") stripped (built: $(mb "$BUILT"), line tables: $(mb "$STAGE/envbench.debug"))"
echo "dist: $OUT/$NAME.tar.gz $(mb "$OUT/$NAME.tar.gz")"
echo "dist: $OUT/$NAME-debug.tar.gz $(mb "$OUT/$NAME-debug.tar.gz")"
echo "dist: $DEB $(mb "$DEB")"
echo "dist: needs glibc ${GLIBC#GLIBC_} or newer (its newest versioned glibc symbol)"

if [ "${CHECK:-1}" = 1 ]; then
  # What a host receives: the tarball or the package (and, from `fleet --copy-binary`, a gzip stream of the binary
  # much like the tarball). The binary itself is larger unpacked: docs/development.md#binary-size says why.
  for file in "$OUT/$NAME.tar.gz" "$DEB"; do
    if [ "$(stat -c %s "$file")" -gt $((MAX_MB * 1000 * 1000)) ]; then
      echo "dist: FAIL: $file is $(mb "$file"), over $MAX_MB MB" >&2
      exit 1
    fi
  done
  ROOT="$SCRATCH/root"
  mkdir "$ROOT"
  dpkg -x "$DEB" "$ROOT"
  # No cargo, rustc or build tree in reach: only the system's directories and the unpacked package.
  clean=(env -i HOME="$ROOT" PATH="$ROOT/usr/bin:/usr/bin:/bin" LANG=C.UTF-8)
  "${clean[@]}" "$ROOT/usr/bin/envbench" --version
  "${clean[@]}" ENVBENCH_STORE="$ROOT/results.db" "$ROOT/usr/bin/envbench" sysinfo --path "$ROOT" >"$ROOT/sysinfo.txt"
  grep -q . "$ROOT/sysinfo.txt" || { echo "dist: FAIL: sysinfo printed nothing" >&2; exit 1; }
  head -n 5 "$ROOT/sysinfo.txt"
  mkdir "$ROOT/tarball" && tar -C "$ROOT/tarball" -xzf "$OUT/$NAME.tar.gz"
  "${clean[@]}" "$ROOT/tarball/$NAME/envbench" --version >/dev/null
  dpkg-deb -c "$DEB" | awk '{print $NF}' | grep -q '^./usr/bin/envbench$'
  man -l "$ROOT/usr/share/man/man1/envbench.1.gz" >/dev/null
  echo "dist: checked: the .deb unpacked into a scratch root runs --version and sysinfo, its man page renders; the tarball's binary runs"
fi
