#!/usr/bin/env bash
# CI under load (issue #66): the whole of CI (`bash .ci/run`: fmt, the build, every crate's tests) ROUNDS times in a
# row (default 3) with a CPU hog on every core, so that a test whose assertion leans on how fast the host is shows
# itself here rather than on a busy CI runner. Every round must be green.
#
#   bench/ci-under-load.sh [ROUNDS]
#
# The hogs are stress-ng's CPU workers where stress-ng is installed, one `yes > /dev/null` per CPU otherwise, at the
# tests' own priority (a hog that yields to them proves nothing). They stop when the script ends, however it ends.
# Each round's log is kept in $LOGS (default a fresh directory under /tmp); the summary gives each round's wall time,
# its tests passed and failed, and the names of the failed ones. CARGO_TARGET_DIR is passed on to .ci/run (give one
# of its own to keep a shared cache out of it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-3}
case "$rounds" in '' | *[!0-9]* | 0) echo "usage: $0 [ROUNDS], ROUNDS a whole number from 1" >&2; exit 2 ;; esac
logs=${LOGS:-$(mktemp -d /tmp/ci-under-load.XXXXXX)}
mkdir -p "$logs"
cpus=$(nproc)

hogs=()
stop_hogs() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop_hogs EXIT
trap 'exit 130' INT TERM
if command -v stress-ng >/dev/null; then
  stress-ng --cpu "$cpus" --quiet &
  hogs+=($!)
  hog="stress-ng --cpu $cpus"
else
  for _ in $(seq "$cpus"); do
    yes >/dev/null &
    hogs+=($!)
  done
  hog="$cpus x yes > /dev/null"
fi
echo "ci under load: $rounds rounds of bash .ci/run beside $hog on a $cpus-CPU host; logs in $logs"

red=0
summary=()
for round in $(seq "$rounds"); do
  log="$logs/round-$round.log"
  started=$(date +%s)
  if bash .ci/run >"$log" 2>&1; then status=green; else status=red; red=$((red + 1)); fi
  seconds=$(($(date +%s) - started))
  passed=$(grep -Eo '^test result: [A-Za-z]+\. [0-9]+ passed' "$log" | awk '{s += $4} END {print s + 0}')
  failed=$(grep -Eo '; [0-9]+ failed' "$log" | awk '{s += $2} END {print s + 0}')
  line=$(printf 'round %d: %s in %dm %02ds, %d passed, %d failed' "$round" "$status" $((seconds / 60)) $((seconds % 60)) \
    "$passed" "$failed")
  failures=$(grep -E '^test .* \.\.\. FAILED$' "$log" | sed -E 's/^test (.*) \.\.\. FAILED$/\1/' | sort -u | paste -sd, - || true)
  [ -n "$failures" ] && line="$line: $failures"
  echo "$line"
  summary+=("$line")
done

echo
echo "ci under load, $hog:"
printf '  %s\n' "${summary[@]}"
[ "$red" -eq 0 ] || { echo "ci under load: $red of $rounds rounds red (logs in $logs)" >&2; exit 1; }
echo "ci under load: all $rounds rounds green"
