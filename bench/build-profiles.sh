#!/usr/bin/env bash
# Does the quick build lose speed where it counts? The release profile (no LTO, DataFusion's planning crates
# unoptimized: a third of the build time, a sixth of the memory) against the fat-LTO build the project shipped until
# 2026-11 (the `fat-lto` profile keeps it), on the hot paths, judged by envbench's own compare.
#
# Both binaries run every workload in turn (baseline, candidate, baseline, candidate, ...), RUNS times a side, so that a
# shared host's slow minutes fall on both alike; each run is stored under the label SIDE-WORKLOAD in one store, and
# `envbench compare` judges each workload's pair. The hot paths:
#   tpch         TPC-H SF 1 on embedded DataFusion, the power test (the 22 queries' geometric mean);
#   cube         the cube at scale 0.1, the 8-step sequence, --repeat 3;
#   oltp-sqlite  the TPC-C-derived transactions on embedded SQLite (NOPM);
#   oltp-pg      the same in procedures mode on PostgreSQL (NOPM), in a schema this script creates and drops (psql);
#   disk         RND4K Q32T1 read (IOPS);
#   ranread      random 8 KiB reads of one file at 1, 2 and 4 jobs (IOPS).
# The table says each workload's speed factor (the geometric mean of its tests' ratios, candidate against baseline),
# its 95% interval, compare's verdict, and whether the candidate is within LIMIT (3%) of the baseline: at most 3%
# slower. It exits 1 when a workload's verdict is not "about the same" or its candidate is more than LIMIT slower.
#
# Usage: bench/build-profiles.sh [BASELINE CANDIDATE]
#   BASELINE and CANDIDATE are envbench binaries; without them this builds both from this tree:
#   `cargo build --profile fat-lto` (about 45 minutes and 12 GiB on 2 vCPUs) and `cargo build --release`.
# Environment: DIR (data directory, default /var/tmp/envbench-build-profiles; TPC-H SF 1 keeps 0.4 GB of Parquet there),
#   RUNS (3), WORKLOADS ("tpch cube oltp-sqlite oltp-pg disk ranread"), PG (postgres://postgres@127.0.0.1/test), SCHEMA
#   (envbench_build_profiles, created and dropped in PG), LIMIT
#   (0.03), SMOKE=1 (tiny sizes, to try the script: its figures say nothing), KEEP=1 (keep the store).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
DIR=${DIR:-/var/tmp/envbench-build-profiles}
WORKLOADS=${WORKLOADS:-tpch cube oltp-sqlite oltp-pg disk ranread}
PG=${PG:-postgres://postgres@127.0.0.1/test}
LIMIT=${LIMIT:-0.03}
SMOKE=${SMOKE:-0}
case "$RUNS" in '' | *[!0-9]* | 0 | 1) echo "build-profiles: RUNS must be a whole number of at least 2, got '$RUNS'" >&2; exit 2 ;; esac
if [ $# -eq 2 ]; then
  BASELINE=$1
  CANDIDATE=$2
elif [ $# -eq 0 ]; then
  export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
  cargo build --locked --quiet --release -p envbench
  cargo build --locked --quiet --profile fat-lto -p envbench
  BASELINE="$CARGO_TARGET_DIR/fat-lto/envbench"
  CANDIDATE="$CARGO_TARGET_DIR/release/envbench"
else
  echo "usage: bench/build-profiles.sh [BASELINE CANDIDATE]" >&2
  exit 2
fi
for binary in "$BASELINE" "$CANDIDATE"; do
  [ -x "$binary" ] || { echo "build-profiles: $binary is not an executable" >&2; exit 2; }
done

mkdir -p "$DIR"
WORK=$(mktemp -d "$DIR/run.XXXXXX")
export ENVBENCH_STORE="$WORK/results.db"
# oltp-pg works in a schema this script creates, and drops (without CASCADE) once envbench has dropped its tables.
SCHEMA=${SCHEMA:-envbench_build_profiles}
CREATED_SCHEMA=0
cleanup() {
  if [ "$CREATED_SCHEMA" = 1 ]; then
    "$CANDIDATE" oltp --drop --target "$PG" --schema "$SCHEMA" >/dev/null 2>&1 || true
    psql "$PG" -qc "DROP SCHEMA $SCHEMA" >/dev/null || echo "build-profiles: schema $SCHEMA was left in $PG" >&2
  fi
  if [ "${KEEP:-0}" = 1 ]; then
    echo "build-profiles: the runs are kept in $ENVBENCH_STORE" >&2
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT

if [ "$SMOKE" = 1 ]; then
  TPCH=(--sf 0.01)
  CUBE=(--scale 0.002 --repeat 3)
  OLTP=(--warehouses 1 --users 1 --ramp 0s --duration 2s)
  DISK=(--size 16m --runs 3 --duration 200ms --no-warmup --interval 0s)
  RANREAD=(--size 16m --jobs 1,2 --duration 500ms)
else
  TPCH=(--sf 1)
  CUBE=(--scale 0.1 --repeat 3)
  OLTP=(--warehouses 2 --users 2 --ramp 5s --duration 30s)
  DISK=(--size 1g --runs 3 --duration 5s)
  RANREAD=(--size 1g --jobs 1,2,4 --duration 5s)
fi

# args WORKLOAD: the command line of one workload.
args() {
  case $1 in
    tpch) echo tpch --dir "$DIR/tpch" "${TPCH[@]}" --power-only ;;
    cube) echo cube --dir "$DIR/cube" "${CUBE[@]}" ;;
    oltp-sqlite) echo oltp --dir "$DIR/oltp" "${OLTP[@]}" ;;
    oltp-pg) echo oltp --target "$PG" --schema "$SCHEMA" --mode procedures "${OLTP[@]}" ;;
    disk) echo disk --dir "$DIR/disk" "${DISK[@]}" --test rnd:4k:q32:t1:read ;;
    ranread) echo ranread --dir "$DIR/ranread" "${RANREAD[@]}" ;;
    *) echo "build-profiles: unknown workload '$1' in WORKLOADS" >&2; return 2 ;;
  esac
}

if [[ " $WORKLOADS " == *" oltp-pg "* ]]; then
  if ! psql "$PG" -qc "CREATE SCHEMA $SCHEMA" >/dev/null; then
    echo "build-profiles: cannot create schema $SCHEMA in $PG (it may exist: drop it, or set SCHEMA)" >&2
    exit 2
  fi
  CREATED_SCHEMA=1
fi

# Data that is made once (TPC-H's Parquet, the OLTP databases, ranread's file) is made before any measured run, by
# the candidate, into a store of its own.
echo "build-profiles: preparing ${WORKLOADS// /, } in $DIR" >&2
mkdir -p "$DIR/tpch" "$DIR/cube" "$DIR/oltp" "$DIR/disk" "$DIR/ranread"
for workload in $WORKLOADS; do
  read -r -a command <<<"$(args "$workload")"
  if ! ENVBENCH_STORE="$WORK/prepare.db" "$CANDIDATE" "${command[@]}" >"$WORK/prepare-$workload.out" 2>&1; then
    echo "build-profiles: preparing $workload failed:" >&2
    tail -5 "$WORK/prepare-$workload.out" >&2
    exit 1
  fi
done

for run in $(seq 1 "$RUNS"); do
  for workload in $WORKLOADS; do
    read -r -a command <<<"$(args "$workload")"
    for side in baseline candidate; do
      binary=$BASELINE
      [ "$side" = candidate ] && binary=$CANDIDATE
      echo "build-profiles: run $run of $RUNS, $workload, $side" >&2
      if ! "$binary" "${command[@]}" --label "$side-$workload" >"$WORK/$side-$workload-$run.out" 2>&1; then
        echo "build-profiles: $workload with the $side failed:" >&2
        tail -5 "$WORK/$side-$workload-$run.out" >&2
        exit 1
      fi
    done
  done
done

for workload in $WORKLOADS; do
  "$CANDIDATE" compare "label:baseline-$workload" "label:candidate-$workload" --json >"$WORK/compare-$workload.json"
  "$CANDIDATE" compare "label:baseline-$workload" "label:candidate-$workload" >"$WORK/compare-$workload.txt"
done

echo "build-profiles: baseline $BASELINE ($(stat -c %s "$BASELINE") bytes), candidate $CANDIDATE ($(stat -c %s "$CANDIDATE") bytes), $RUNS runs a side"
python3 - "$WORK" "$LIMIT" $WORKLOADS <<'PY'
import json, os, sys
work, limit, workloads = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
failed = False
print(f"{'workload':<13}{'factor':>8}  {'95% interval':<16}{'verdict':<16}{'within ' + format(limit, '.0%'):<11}summary")
for name in workloads:
    comparison = json.load(open(os.path.join(work, f"compare-{name}.json")))
    verdicts = comparison["verdicts"][0]["workloads"]
    if len(verdicts) != 1:
        print(f"{name:<13}compare judged {len(verdicts)} workloads, expected 1")
        failed = True
        continue
    v = verdicts[0]
    low, high = v["interval"] if v["interval"] else (float("nan"), float("nan"))
    # Within LIMIT: no more than LIMIT slower (a faster candidate loses nothing).
    within = v["ratio"] >= 1 - limit
    decision = {"same": "about the same", "cannot_tell": "cannot tell"}.get(v["decision"], v["decision"])
    failed |= v["decision"] != "same" or not within
    print(f"{name:<13}{v['ratio']:>8.3f}  {low:.3f}..{high:<9.3f}{decision:<16}{'yes' if within else 'NO':<11}{v['summary']}")
print("factor: candidate against baseline, above 1 is faster; the verdict is envbench compare's")
sys.exit(1 if failed else 0)
PY
