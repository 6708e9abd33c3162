#!/usr/bin/env bash
# Benchmark of the capacity search (not a test): is `oltp --rate auto --slo ...` a figure one can quote, the same
# within 10% when the same server is asked again? On the local PostgreSQL, $RUNS runs (default 3) of TPC-C at
# $WAREHOUSES warehouse(s) (default 1) and $USERS users (default 4), each the closed-loop peak and then open-loop rates
# until $SLO (default new-order:p95<=20ms) breaks, $RAMP of ramp-up (default 5s) and $DURATION measured (default 20s) a
# step. Prints each run's steps, capacity and closed-loop peak, then the capacities' spread about their median; exits 1
# when a run found no capacity, found one above its peak by more than a measurement's noise (10%), or the spread
# passes 10%.
#
#   bench/capacity.sh                                   # release build
#   ENVBENCH=target/debug/envbench RUNS=3 DURATION=5s bench/capacity.sh
set -euo pipefail

RUNS=${RUNS:-3}
WAREHOUSES=${WAREHOUSES:-1}
USERS=${USERS:-4}
SLO=${SLO:-new-order:p95<=20ms}
RAMP=${RAMP:-5s}
DURATION=${DURATION:-20s}
POSTGRES_URL=${POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
WORK=${WORK:-/tmp/envbench-capacity}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

. bench/envbench.sh
export ENVBENCH_STORE="$WORK/results.db"

echo "== capacity within $SLO: TPC-C $WAREHOUSES warehouse(s), $USERS users, $RUNS runs, ramp $RAMP, $DURATION a step, $(nproc) CPUs"
: >"$WORK/capacities"
# Load first, so that no run measures a server still busy with a fresh load (autovacuum, the checkpoint after it).
"$ENVBENCH" oltp --target "$POSTGRES_URL" --warehouses "$WAREHOUSES" --users 1 --ramp 0s --duration 1s --json \
  >/dev/null 2>&1
for run in $(seq 1 "$RUNS"); do
  "$ENVBENCH" oltp --target "$POSTGRES_URL" --warehouses "$WAREHOUSES" --users "$USERS" --rate auto --slo "$SLO" \
    --ramp "$RAMP" --duration "$DURATION" --json 2>/dev/null >"$WORK/run.json"
  python3 - "$run" "$WORK/run.json" >>"$WORK/capacities" <<'EOF'
import json, sys
run, path = sys.argv[1:]
d = json.load(open(path))["oltp"]
for step in d["steps"]:
    offered = f"{step['open']['offered_tps']:8.1f}/s" if step.get("open") else "  closed   "
    judged = ", ".join(f"{j['level']['kind']} {j['measured_ms'] or 0:.1f} ms{'' if j['met'] else ' MISSED'}"
                       for j in step.get("slo", []))
    print(f"# run {run} {offered} {step['nopm']:9.0f} NOPM  {judged}", file=sys.stderr)
c = d["capacity"]
print(f"{run}\t{c['capacity'] or 0}\t{c['peak']}")
EOF
  tail -n 1 "$WORK/capacities" | awk -F'\t' '{printf "run %s: capacity %.0f NOPM, closed-loop peak %.0f NOPM (%.0f%%)\n", $1, $2, $3, $2 * 100 / $3}'
done
python3 - "$WORK/capacities" <<'EOF'
import statistics, sys
rows = [line.split("\t") for line in open(sys.argv[1]).read().split("\n") if line]
capacities = [float(r[1]) for r in rows]
peaks = [float(r[2]) for r in rows]
median = statistics.median(capacities)
spread = (max(capacities) - min(capacities)) / median if median else float("inf")
print(f"capacities {', '.join(f'{c:.0f}' for c in capacities)} NOPM: median {median:.0f}, "
      f"spread (max - min) / median {spread * 100:.1f}% (at most 10%)")
bad = [r for r in rows if float(r[1]) <= 0 or float(r[1]) > float(r[2]) * 1.1]
if bad or spread > 0.10:
    print(f"NOT STABLE: {bad or ''}")
    sys.exit(1)
EOF
