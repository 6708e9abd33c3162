#!/usr/bin/env bash
# Compare envbench ranread's steps with fio on the same database file, alternating the two tools.
#
# For J = 1, 4, 16 jobs of synchronous 8 KiB random reads (queue depth 1 each, O_DIRECT) it runs envbench ranread
# (`--jobs J`), then fio (`rw=randread bs=8k iodepth=1 numjobs=J direct=1`, psync: one pread per I/O, as RanRead's
# jobs do) on the data region of the same envbench-ranread.dat, ROUNDS times, and prints per J the ratio envbench/fio
# of IOPS and of mean latency. envbench runs with each of its engines (io_uring at depth 1 and the pread thread pool).
# Target: within 3% of fio at every J. Then it times a full automatic sweep (--jobs auto --duration 5s).
#
# Usage: bench/ranread-vs-fio.sh [DIR]   Environment: SIZE (4g), DURATION seconds (10), ROUNDS (2), JOBS ("1 4 16").
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-/var/tmp/envbench-ranread-bench}
SIZE=${SIZE:-4g}
DURATION=${DURATION:-10}
ROUNDS=${ROUNDS:-2}
JOBS=${JOBS:-1 4 16}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
export ENVBENCH_STORE=${ENVBENCH_STORE:-$DIR/results.db}

command -v fio >/dev/null || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fio >/dev/null; }
mkdir -p "$DIR"
cargo build --quiet --release -p envbench
ENVBENCH="$CARGO_TARGET_DIR/release/envbench"

# Create (or reuse) the database file with a one-step sweep.
"$ENVBENCH" ranread --dir "$DIR" --size "$SIZE" --jobs 1 --iterations 100 --json >/dev/null
FILE="$DIR/envbench-ranread.dat"
HEADER_BYTES=65536
DATA_BYTES=$(( $(stat -c %s "$FILE") - HEADER_BYTES ))
RESULTS=$(mktemp)
trap 'rm -f "$RESULTS"' EXIT
echo "ranread-vs-fio: $(fio --version), $FILE ($SIZE of data), ${DURATION}s steps, $ROUNDS rounds" >&2

for jobs in $JOBS; do
  for round in $(seq 1 "$ROUNDS"); do
    for engine in io_uring threadpool; do
      printf '%s\t%s\tenvbench-%s\t' "$jobs" "$round" "$engine" >>"$RESULTS"
      "$ENVBENCH" ranread --dir "$DIR" --size "$SIZE" --jobs "$jobs" --duration "${DURATION}s" --engine "$engine" --json \
        | python3 -c 'import json,sys; s=json.load(sys.stdin)["ranread"]["outcome"]["steps"][0]; print(s["iops"], s["mean_ms"]*1000)' \
        >>"$RESULTS"
    done
    printf '%s\t%s\tfio\t' "$jobs" "$round" >>"$RESULTS"
    fio --name=ranread --filename="$FILE" --offset="$HEADER_BYTES" --size="$DATA_BYTES" --ioengine=psync --direct=1 \
      --rw=randread --bs=8k --iodepth=1 --numjobs="$jobs" --time_based=1 --runtime="$DURATION" --norandommap=1 \
      --randrepeat=0 --group_reporting=1 --allow_file_create=0 --output-format=json \
      | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["read"]; print(j["iops"], j["clat_ns"]["mean"]/1000)' \
      >>"$RESULTS"
  done
done

python3 - "$RESULTS" <<'PY'
import sys, collections
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    jobs, _round, tool, figures = line.rstrip("\n").split("\t")
    iops, lat = map(float, figures.split())
    rows[int(jobs)][tool].append((iops, lat))
mean = lambda xs: sum(xs) / len(xs)
print(f"{'J':>3} {'engine':<10} {'IOPS envbench':>14} {'IOPS fio':>10} {'IOPS ratio':>10} {'lat envbench':>13} {'lat fio':>9} {'lat ratio':>9}")
for jobs in sorted(rows):
    fio = rows[jobs]["fio"]
    for engine in ("io_uring", "threadpool"):
        ours = rows[jobs][f"envbench-{engine}"]
        iops_e, iops_f = mean([r[0] for r in ours]), mean([r[0] for r in fio])
        lat_e, lat_f = mean([r[1] for r in ours]), mean([r[1] for r in fio])
        print(f"{jobs:>3} {engine:<10} {iops_e:>14.0f} {iops_f:>10.0f} {iops_e/iops_f:>10.3f} {lat_e:>11.1f}us {lat_f:>7.1f}us {lat_e/lat_f:>9.3f}")
PY

echo "ranread-vs-fio: timing a full automatic sweep (--jobs auto --duration 5s)" >&2
start=$(date +%s.%N)
"$ENVBENCH" ranread --dir "$DIR" --size "$SIZE" --jobs auto --duration 5s >/dev/null 2>&1
end=$(date +%s.%N)
python3 -c "print(f'full auto sweep: {float($end) - float($start):.1f} s')"
