#!/usr/bin/env bash
# Compare envbench's I/O engine with fio on this machine, on the same file, alternating the two tools.
#
# For each test it runs envbench, fio, envbench, fio (ROUNDS rounds) on one envbench test file and prints, per test,
# the ratios envbench/fio of IOPS and of mean latency (each round paired with the fio run that follows it, and over
# the rounds' means) and the CPU time per I/O of each. Targets: IOPS ratio >= 1.0 (never below 0.97), queue-depth-1
# mean latency within 3% of fio, CPU per I/O no more than fio's.
#
# Usage: bench/disk-vs-fio.sh [DIR]    (DIR: a directory on the disk under test; default /var/tmp)
# Environment: SIZE (1g), DURATION in seconds (10), ROUNDS (2), ENGINE (io_uring), TESTS (space-separated specs).
# Run it on a quiet machine: other CPU or disk load shows up as noise in both tools.
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-/var/tmp}
SIZE=${SIZE:-1g}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
ENGINE=${ENGINE:-io_uring}
TESTS=${TESTS:-rnd:4k:q32:t1:read rnd:4k:q1:t1:read seq:1m:q8:t1:read rnd:4k:q32:t1:write}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}

if ! command -v fio >/dev/null; then
  echo "disk-vs-fio: installing fio" >&2
  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null
fi
command -v python3 >/dev/null || { echo "disk-vs-fio: python3 is needed to summarise" >&2; exit 1; }

cargo build --quiet --release -p envbench-io --example iobench
IOBENCH="$CARGO_TARGET_DIR/release/examples/iobench"

FILE=$("$IOBENCH" prepare --dir "$DIR" --size "$SIZE" --engine "$ENGINE")
RESULTS=$(mktemp)
trap 'rm -f "$FILE" "$RESULTS"' EXIT
FILE_BYTES=$(stat -c %s "$FILE")
echo "disk-vs-fio: $(fio --version), file $FILE ($SIZE), ${DURATION}s runs, $ROUNDS rounds, engine $ENGINE" >&2

# fio's equivalent of an envbench test spec (pattern:block:qN:tN:op), written out here rather than taken from
# envbench's own --cross-check builder, so the comparison does not depend on the code under test.
fio_args() {
  local pattern block depth threads op rw ioengine
  IFS=: read -r pattern block depth threads op <<<"$1"
  case "$pattern:$op" in
    seq:read) rw=read ;; seq:write) rw=write ;; rnd:read) rw=randread ;; rnd:write) rw=randwrite ;;
    *) echo "disk-vs-fio: unsupported test $1" >&2; exit 2 ;;
  esac
  ioengine=io_uring
  if [ "$ENGINE" = threadpool ]; then
    if [ "${depth#q}" = 1 ]; then ioengine=psync; else ioengine=posixaio; fi
  fi
  echo --name=fio --filename="$FILE" --size="$FILE_BYTES" --ioengine=$ioengine --direct=1 --rw=$rw --bs="$block" \
    --iodepth="${depth#q}" --numjobs="${threads#t}" --time_based=1 --runtime="$DURATION" --norandommap=1 \
    --randrepeat=0 --group_reporting=1 --allow_file_create=0 --fallocate=none --output-format=json
}

for test in $TESTS; do
  for round in $(seq 1 "$ROUNDS"); do
    echo "disk-vs-fio: $test round $round: envbench" >&2
    printf '%s\t%s\tenvbench\t' "$test" "$round" >>"$RESULTS"
    "$IOBENCH" run "$test" --file "$FILE" --duration "${DURATION}s" --engine "$ENGINE" --json >>"$RESULTS"
    echo "disk-vs-fio: $test round $round: fio" >&2
    printf '%s\t%s\tfio\t' "$test" "$round" >>"$RESULTS"
    # shellcheck disable=SC2046
    fio $(fio_args "$test") | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)))' >>"$RESULTS"
  done
done

python3 - "$RESULTS" <<'PY'
import json, sys

runs = {}
for line in open(sys.argv[1]):
    test, round_, tool, text = line.rstrip("\n").split("\t", 3)
    doc = json.loads(text)
    if tool == "envbench":
        figures = (doc["iops"], doc["latency_us"]["mean_us"], doc["cpu_per_io_us"])
    else:
        job = doc["jobs"][0]
        side = job["read"] if job["read"]["total_ios"] else job["write"]
        cpu_us = (job["usr_cpu"] + job["sys_cpu"]) / 100 * job["job_runtime"] * 1000
        figures = (side["iops"], side["lat_ns"]["mean"] / 1000, cpu_us / side["total_ios"])
    runs.setdefault(test, {}).setdefault(tool, []).append(figures)

mean = lambda values: sum(values) / len(values)

def cv(values):
    """Coefficient of variation across rounds: the run-to-run noise each ratio must be read against."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return (sum((v - m) ** 2 for v in values) / (len(values) - 1)) ** 0.5 / m

print(f"{'test':<22} {'IOPS envbench':>13} {'IOPS fio':>9} {'IOPS ratio':>10} {'min pair':>8} {'IOPS CV e/f':>11} "
      f"{'lat envbench':>12} {'lat fio':>8} {'lat ratio':>9} {'CPU/IO envbench':>15} {'CPU/IO fio':>10}")
for test, tools in runs.items():
    ours, fio = tools["envbench"], tools["fio"]
    pairs = [o[0] / f[0] for o, f in zip(ours, fio)]
    iops_o, iops_f = mean([r[0] for r in ours]), mean([r[0] for r in fio])
    lat_o, lat_f = mean([r[1] for r in ours]), mean([r[1] for r in fio])
    cpu_o, cpu_f = mean([r[2] for r in ours]), mean([r[2] for r in fio])
    noise = f"{cv([r[0] for r in ours]):.0%}/{cv([r[0] for r in fio]):.0%}"
    print(f"{test:<22} {iops_o:>13.0f} {iops_f:>9.0f} {iops_o / iops_f:>10.3f} {min(pairs):>8.3f} {noise:>11} "
          f"{lat_o:>10.1f}us {lat_f:>6.1f}us {lat_o / lat_f:>9.3f} {cpu_o:>13.2f}us {cpu_f:>8.2f}us")
PY
