#!/usr/bin/env bash
# Closed loop against open loop under one stall (not a test): the chart in docs/oltp.md. On the local PostgreSQL, TPC-C
# at 1 warehouse and $USERS users (default 4): a closed-loop step, then an open-loop step at $RATE transactions per
# second (default 40), each $DURATION measured (default 5s) after a 1 s ramp, and in each a session holds
# `LOCK TABLE tpcc_stock IN ACCESS EXCLUSIVE MODE` (every New-Order updates stock) for $STALL seconds (default 3) from
# half a second into the window. Prints both steps' New-Order percentiles and writes them as an SVG bar chart to
# $CHART (default docs/img/closed-vs-open-loop.svg), in a schema this script creates and drops.
#
#   bench/open-loop-stall.sh                       # release build
#   ENVBENCH=target/debug/envbench bench/open-loop-stall.sh
set -euo pipefail

USERS=${USERS:-4}
RATE=${RATE:-40}
DURATION=${DURATION:-5s}
STALL=${STALL:-3}
SCHEMA=${SCHEMA:-envbench_open_loop_stall}
CHART=${CHART:-docs/img/closed-vs-open-loop.svg}
WORK=${WORK:-/tmp/envbench-open-loop-stall}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

. bench/envbench.sh
export ENVBENCH_STORE="$WORK/results.db"
psql_test() { psql -h 127.0.0.1 -U postgres -d test -v ON_ERROR_STOP=1 -Atqc "$1"; }
psql_test "DROP SCHEMA IF EXISTS $SCHEMA CASCADE; CREATE SCHEMA $SCHEMA"
trap 'psql_test "DROP SCHEMA IF EXISTS $SCHEMA CASCADE"' EXIT
url="postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3D$SCHEMA"

stalled() { # NAME [OPTIONS...]: one step with the stall; its JSON in $WORK/NAME.json
  local name=$1; shift
  "$ENVBENCH" oltp --target "$url" --users "$USERS" --ramp 1s --duration "$DURATION" --no-vacuum \
    --target-latency 1h --json "$@" >"$WORK/$name.json" 2>/dev/null &
  local pid=$!
  # The users pin their sessions to the schema as they connect; the step begins when all have.
  until [ "$(psql_test "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'envbench-oltp user' \
    AND query LIKE '%$SCHEMA%'")" -gt 0 ]; do sleep 0.02; done
  sleep 1.5
  psql_test "BEGIN; LOCK TABLE $SCHEMA.tpcc_stock IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep($STALL); COMMIT;" >/dev/null
  wait "$pid"
}
"$ENVBENCH" oltp --target "$url" --users 1 --ramp 0s --duration 1s --json >/dev/null 2>&1 # the load
stalled closed
stalled open --rate "$RATE"

python3 - "$WORK/closed.json" "$WORK/open.json" "$CHART" "$USERS" "$RATE" "$STALL" "$DURATION" <<'EOF'
import json, math, sys
closed_path, open_path, chart, users, rate, stall, duration = sys.argv[1:]
def new_order(path):
    step = json.load(open(path))["oltp"]["steps"][0]
    return step, next(k for k in step["kinds"] if k["kind"] == "NewOrder")
(cs, c), (os_, o) = new_order(closed_path), new_order(open_path)
marks = [("p50", "p50_ms"), ("p90", "p90_ms"), ("p99", "p99_ms"), ("max", "max_ms")]
for name, step, k in [("closed loop", cs, c), ("open loop  ", os_, o)]:
    print(f"{name}: {k['count']} New-Orders, " + ", ".join(f"{m} {k[f]:.1f} ms" for m, f in marks)
          + (f"; late {step['open']['late']}, lag max {step['open']['lag_max_ms']:.0f} ms" if step.get("open") else ""))
# A grouped bar chart on a log scale, 1 ms to 10 s.
W, H, left, bottom, top = 640, 330, 60, 40, 76
plot_w, plot_h = W - left - 20, H - top - bottom
lo, hi = 0.0, 4.0  # log10 ms
y = lambda ms: top + plot_h - (min(max(math.log10(max(ms, 1.0)), lo), hi) - lo) / (hi - lo) * plot_h
out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{W/2}" y="20" text-anchor="middle" font-size="14">New-Order latency, one {stall} s stall in a '
       f'{duration} window (PostgreSQL, {users} users)</text>']
for tick, label in [(1, "1 ms"), (10, "10 ms"), (100, "100 ms"), (1000, "1 s"), (10000, "10 s")]:
    out.append(f'<line x1="{left}" x2="{W-20}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ddd"/>')
    out.append(f'<text x="{left-6}" y="{y(tick)+4:.1f}" text-anchor="end">{label}</text>')
group = plot_w / len(marks)
for i, (name, field) in enumerate(marks):
    x0 = left + i * group + group * 0.15
    for j, (k, colour) in enumerate([(c, "#4477aa"), (o, "#cc6677")]):
        x = x0 + j * group * 0.35
        out.append(f'<rect x="{x:.1f}" y="{y(k[field]):.1f}" width="{group*0.33:.1f}" '
                   f'height="{top+plot_h-y(k[field]):.1f}" fill="{colour}"/>')
        out.append(f'<text x="{x+group*0.165:.1f}" y="{y(k[field])-4:.1f}" text-anchor="middle" font-size="10">'
                   f'{k[field]:.0f}</text>')
    out.append(f'<text x="{left+i*group+group/2:.1f}" y="{H-bottom+16}" text-anchor="middle">{name}</text>')
out.append(f'<rect x="{left+10}" y="32" width="10" height="10" fill="#4477aa"/>'
           f'<text x="{left+24}" y="41">closed loop (latency of what was sent)</text>')
out.append(f'<rect x="{left+10}" y="48" width="10" height="10" fill="#cc6677"/>'
           f'<text x="{left+24}" y="57">open loop at {rate}/s (response time from the intended start)</text>')
out.append(f'<text x="{W/2}" y="{H-6}" text-anchor="middle" fill="#555">ms, log scale</text></svg>')
open(chart, "w").write("\n".join(out) + "\n")
print(f"wrote {chart}")
EOF
