#!/usr/bin/env bash
# Benchmark of envbench's OLTP driver (not a test): is envbench's own client the bottleneck? On the local PostgreSQL,
# pgbench's TPC-B-like transaction at scale $SCALE (default 10) with $CLIENTS clients (default 8) for $SECONDS_EACH
# seconds (default 60), run by envbench (`oltp --profile tpcb`) and by pgbench itself (`-M prepared`, one thread per
# client), alternating, $ROUNDS rounds (default 3), on the same tables. Prints each round's TPS and the ratio
# envbench/pgbench; the goal is 0.95 or more.
set -euo pipefail

SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-8}
SECONDS_EACH=${SECONDS_EACH:-60}
ROUNDS=${ROUNDS:-3}
URL=${URL:-postgres://postgres@127.0.0.1:5432/test}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
WORK=${WORK:-/tmp/envbench-oltp-bench}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

cargo build --quiet --release -p envbench
ENVBENCH="$CARGO_TARGET_DIR/release/envbench"
PGBENCH=$(command -v pgbench || ls /usr/lib/postgresql/*/bin/pgbench | sort -V | tail -n 1)
export ENVBENCH_STORE="$WORK/results.db"

echo "== loading scale $SCALE (reused when it is already there)"
"$ENVBENCH" oltp --target "$URL" --profile tpcb --scale "$SCALE" --users 1 --ramp 0s --duration 1s >/dev/null

echo "== $ROUNDS rounds, $CLIENTS clients, ${SECONDS_EACH}s each, $(nproc) CPUs, $("$PGBENCH" --version)"
ratios=()
for round in $(seq 1 "$ROUNDS"); do
  ours=$("$ENVBENCH" oltp --target "$URL" --profile tpcb --scale "$SCALE" --users "$CLIENTS" --ramp 0s \
           --duration "${SECONDS_EACH}s" --json 2>/dev/null |
         python3 -c "import json,sys; d=json.load(sys.stdin)['oltp']; print(d['steps'][0]['tpm']/60)")
  theirs=$("$PGBENCH" -n -M prepared -b tpcb-like -c "$CLIENTS" -j "$CLIENTS" -T "$SECONDS_EACH" "$URL" 2>/dev/null |
           awk '/^tps = /{print $3}')
  ratio=$(python3 -c "print(f'{$ours/$theirs:.3f}')")
  ratios+=("$ratio")
  printf 'round %d: envbench %.0f TPS, pgbench %.0f TPS, ratio %s\n' "$round" "$ours" "$theirs" "$ratio"
done
python3 -c "import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print(f'median ratio envbench/pgbench: {statistics.median(r):.3f} (min {min(r):.3f}, max {max(r):.3f})')" "${ratios[@]}"
