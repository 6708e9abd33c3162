#!/usr/bin/env bash
# Benchmark of `envbench htap` (not a test), on the local PostgreSQL and MariaDB:
#  1. the interference table of each server: $USERS transactional users (default 2) beside analytic streams
#     $STREAMS (default 0,1,2), $WAREHOUSES warehouses (default 2), $RAMP ramp-up (default 10s) and $DURATION
#     measured (default 60s) per step;
#  2. what the CH tables and the streams' machinery cost the transactions: `htap --analytic-users 0` against `oltp`
#     with the same users, warehouses and window, on the same load, in $ROUNDS alternating rounds (default 3), as the
#     ratio of their NOPM (target: at least 0.95), with envbench's client CPU per transaction of each.
#
#   bench/htap.sh                                      # both servers, release build
#   ENVBENCH=target/debug/envbench SERVERS=postgres ROUNDS=1 bench/htap.sh
set -euo pipefail

WAREHOUSES=${WAREHOUSES:-2}
USERS=${USERS:-2}
STREAMS=${STREAMS:-0,1,2}
ROUNDS=${ROUNDS:-3}
RAMP=${RAMP:-10s}
DURATION=${DURATION:-60s}
SERVERS=${SERVERS:-"postgres mariadb"}
POSTGRES_URL=${POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
MARIADB_URL=${MARIADB_URL:-mysql://root@127.0.0.1:3306/test}
WORK=${WORK:-/tmp/envbench-htap}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

. bench/envbench.sh
export ENVBENCH_STORE="$WORK/results.db" NO_COLOR=1
window=(--warehouses "$WAREHOUSES" --users "$USERS" --ramp "$RAMP" --duration "$DURATION")

echo "== $(nproc) CPUs; $WAREHOUSES warehouses, $USERS users, ramp $RAMP, $DURATION measured per step"
for server in $SERVERS; do
  case $server in
    postgres) url=$POSTGRES_URL ;;
    mariadb) url=$MARIADB_URL ;;
    *) echo "SERVERS: postgres or mariadb, not $server" >&2; exit 2 ;;
  esac
  echo "== $server: interference, analytic streams $STREAMS"
  "$ENVBENCH" htap --target "$url" "${window[@]}" --analytic-users "$STREAMS" 2>/dev/null |
    sed -n '/^USERS  STREAMS/,/^Verdict/{p;/^Verdict/q;}'

  echo "== $server: htap --analytic-users 0 against oltp, $ROUNDS alternating rounds"
  for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then order="oltp htap"; else order="htap oltp"; fi
    for workload in $order; do
      case $workload in
        oltp) "$ENVBENCH" oltp --target "$url" "${window[@]}" --json 2>/dev/null >"$WORK/$workload.json" ;;
        htap) "$ENVBENCH" htap --target "$url" "${window[@]}" --analytic-users 0 --json 2>/dev/null \
          >"$WORK/$workload.json" ;;
      esac
    done
    python3 - "$WORK/oltp.json" "$WORK/htap.json" "$round" <<'PY'
import json, sys
oltp = json.load(open(sys.argv[1]))["oltp"]["steps"][0]
htap = json.load(open(sys.argv[2]))["htap"]["steps"][0]["oltp"]
print(f"round {sys.argv[3]}: oltp {oltp['nopm']:.0f} NOPM ({oltp['client_cpu_us_per_transaction']:.0f} us CPU/tx), "
      f"htap {htap['nopm']:.0f} NOPM ({htap['client_cpu_us_per_transaction']:.0f} us CPU/tx), "
      f"htap/oltp {htap['nopm'] / oltp['nopm']:.3f}")
PY
  done
done
