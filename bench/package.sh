#!/usr/bin/env bash
# bench/package.sh BINARY OUT: the two packages of an envbench binary as it ships (bench/dist.sh passes its stripped
# dist build): OUT/envbench-VERSION-x86_64-linux-gnu/, the tarball's folder, and OUT/envbench_VERSION_amd64.deb.
#
# Both hold the binary, a README that starts from the installed binary (packaging/README.md), docs/ (what its
# links name), the licences, THIRD-PARTY.txt (every linked crate with its licence, from cargo tree), the example
# suites, a man page for envbench and each of its commands (`envbench manpages`) and completions for bash, zsh and
# fish (`envbench completions`), all made by the binary itself so they never trail its command line. In the .deb:
#   /usr/bin/envbench
#   /usr/share/doc/envbench/{README.md,copyright,THIRD-PARTY.txt,docs/,examples/}
#   /usr/share/man/man1/envbench*.1.gz
#   /usr/share/bash-completion/completions/envbench, /usr/share/zsh/vendor-completions/_envbench,
#   /usr/share/fish/vendor_completions.d/envbench.fish
# Its Depends are the Debian packages of the shared libraries the binary needs (objdump's NEEDED), libc6 at the
# newest GLIBC_ symbol version it uses.
#
# Environment: DEB_COMPRESSION (xz; none or gzip for a quick package, as the test makes).
# Needs: dpkg-deb, objdump (binutils), gzip, cargo (for THIRD-PARTY.txt).
set -euo pipefail
[ $# = 2 ] || { echo "usage: bench/package.sh BINARY OUT" >&2; exit 2; }
BINARY=$(realpath "$1")
OUT=$2
cd "$(dirname "$0")/.."
[ -x "$BINARY" ] || { echo "package: $BINARY is not an executable" >&2; exit 2; }
for tool in dpkg-deb objdump gzip cargo; do
  command -v "$tool" >/dev/null || { echo "package: $tool is missing" >&2; exit 2; }
done
VERSION=$(cargo metadata --no-deps --format-version 1 --locked |
  python3 -c 'import json, sys; print(next(p["version"] for p in json.load(sys.stdin)["packages"] if p["name"] == "envbench"))')
NAME="envbench-$VERSION-x86_64-linux-gnu"
DEB="$OUT/envbench_${VERSION}_amd64.deb"
mkdir -p "$OUT"
# Only envbench's own names are replaced in OUT.
rm -rf "${OUT:?}/$NAME" "$DEB"
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# What the binary makes of itself.
"$BINARY" manpages "$SCRATCH/man" 2>/dev/null
gzip -9n "$SCRATCH"/man/*.1
mkdir "$SCRATCH/completions"
"$BINARY" completions bash >"$SCRATCH/completions/envbench"
"$BINARY" completions zsh >"$SCRATCH/completions/_envbench"
"$BINARY" completions fish >"$SCRATCH/completions/envbench.fish"
{
  echo "envbench $VERSION links these crates (name, version, licence):"
  cargo tree --locked -p envbench -e normal --target x86_64-unknown-linux-gnu --prefix none -f '{p} {l}' |
    sed 's/ (\*)$//; s/ (proc-macro)//' | grep -v '^envbench' | sort -u
} >"$SCRATCH/THIRD-PARTY.txt"

# The tarball's folder: everything beside the binary.
FOLDER="$OUT/$NAME"
mkdir -p "$FOLDER/examples" "$FOLDER/man"
cp "$BINARY" "$FOLDER/envbench"
cp packaging/README.md "$FOLDER/README.md"
cp LICENSE-MIT LICENSE-APACHE "$SCRATCH/THIRD-PARTY.txt" "$FOLDER/"
cp examples/*.toml "$FOLDER/examples/"
cp -r docs "$FOLDER/docs"
cp "$SCRATCH"/man/*.1.gz "$FOLDER/man/"
cp -r "$SCRATCH/completions" "$FOLDER/completions"

# The .deb's tree.
ROOT="$SCRATCH/deb"
DOC="$ROOT/usr/share/doc/envbench"
install -D -m 755 "$BINARY" "$ROOT/usr/bin/envbench"
install -d "$DOC/examples" "$ROOT/usr/share/man/man1"
install -m 644 packaging/README.md "$SCRATCH/THIRD-PARTY.txt" "$DOC/"
install -m 644 examples/*.toml "$DOC/examples/"
cp -r docs "$DOC/docs"
find "$DOC/docs" -type f -exec chmod 644 {} + && find "$DOC/docs" -type d -exec chmod 755 {} +
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: envbench"
  echo
  echo "Files: *"
  echo "Copyright: 2026, the envbench authors"
  echo "License: MIT or Apache-2.0"
  echo " The texts follow; THIRD-PARTY.txt lists the crates linked into the binary and their licences."
  echo
  sed 's/^$/./; s/^/ /' LICENSE-MIT
  echo " ."
  sed 's/^$/./; s/^/ /' LICENSE-APACHE
} >"$DOC/copyright"
install -m 644 "$SCRATCH"/man/*.1.gz "$ROOT/usr/share/man/man1/"
install -D -m 644 "$SCRATCH/completions/envbench" "$ROOT/usr/share/bash-completion/completions/envbench"
install -D -m 644 "$SCRATCH/completions/_envbench" "$ROOT/usr/share/zsh/vendor-completions/_envbench"
install -D -m 644 "$SCRATCH/completions/envbench.fish" "$ROOT/usr/share/fish/vendor_completions.d/envbench.fish"

# Depends: the package of each library the binary needs.
GLIBC=$(objdump -T "$BINARY" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -n 1)
depends=()
for library in $(objdump -p "$BINARY" | awk '/NEEDED/ {print $2}'); do
  case "$library" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) dependency="libc6 (>= ${GLIBC#GLIBC_})" ;;
    libgcc_s.so.1) dependency="libgcc-s1" ;;
    *) echo "package: the binary needs $library, whose Debian package bench/package.sh does not know: add it" >&2; exit 1 ;;
  esac
  [[ " ${depends[*]-} " == *" $dependency"* ]] || depends+=("$dependency")
done
DEPENDS=$(IFS=,; echo "${depends[*]}" | sed 's/,/, /g')
mkdir "$ROOT/DEBIAN"
cat >"$ROOT/DEBIAN/control" <<CONTROL
Package: envbench
Version: $VERSION
Architecture: amd64
Maintainer: the envbench authors
Installed-Size: $(du -sk --exclude=DEBIAN "$ROOT" | cut -f1)
Depends: $DEPENDS
Section: utils
Priority: optional
Description: benchmark where your database runs, and compare environments
 envbench fingerprints the environment (CPU, SMT, hypervisor, memory, the storage
 stack under the data directory), runs standardized database workloads from the raw
 disk up (a storage suite, RanRead-style random reads, an EssBench-style OLAP cube,
 TPC-C- and TPC-H-derived workloads on embedded SQLite and DataFusion or on
 PostgreSQL and MariaDB/MySQL, and your own workload replayed from the server's log),
 keeps every result with its environment, and compares environments with honest
 statistics.
CONTROL
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$ROOT" "$DEB" >/dev/null
echo "package: $FOLDER/ and $DEB ($(find "$ROOT" -type f -not -path '*/DEBIAN/*' | wc -l) files; Depends: $DEPENDS)"
