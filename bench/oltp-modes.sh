#!/usr/bin/env bash
# Benchmark of envbench's OLTP modes (not a test): how far do stored procedures (one call per transaction, as
# HammerDB's TPROC-C runs them) take the engine beyond client-side statements (one round trip per statement)? On the
# local PostgreSQL and MariaDB, TPC-C at $WAREHOUSES warehouses (default 2), for each of $USERS (default "1 2"),
# $ROUNDS rounds (default 3) that alternate the two modes, each run on a fresh load (--fresh), $RAMP of ramp-up
# (default 30s) and $DURATION measured (default 60s). Prints per run NOPM, New-Order p50/p95 and envbench's client CPU
# per transaction, and per server and user count the median ratio procedures/client.
#
#   bench/oltp-modes.sh                       # both servers, release build
#   ENVBENCH=target/debug/envbench SERVERS=postgres ROUNDS=1 DURATION=20s bench/oltp-modes.sh
set -euo pipefail

WAREHOUSES=${WAREHOUSES:-2}
USERS=${USERS:-"1 2"}
ROUNDS=${ROUNDS:-3}
RAMP=${RAMP:-30s}
DURATION=${DURATION:-60s}
SERVERS=${SERVERS:-"postgres mariadb"}
POSTGRES_URL=${POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}
MARIADB_URL=${MARIADB_URL:-mysql://root@127.0.0.1:3306/test}
WORK=${WORK:-/tmp/envbench-oltp-modes}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

. bench/envbench.sh
export ENVBENCH_STORE="$WORK/results.db"

summary="$WORK/summary.tsv"
: >"$summary"
echo "== TPC-C, $WAREHOUSES warehouses, users $USERS, $ROUNDS alternating rounds, ramp $RAMP, $DURATION measured, $(nproc) CPUs"
for server in $SERVERS; do
  case $server in
    postgres) url=$POSTGRES_URL ;;
    mariadb) url=$MARIADB_URL ;;
    *) echo "SERVERS: postgres or mariadb, not $server" >&2; exit 2 ;;
  esac
  for users in $USERS; do
    for round in $(seq 1 "$ROUNDS"); do
      # Alternate which mode goes first, so neither always meets the other's leftovers.
      if [ $((round % 2)) = 1 ]; then modes="client procedures"; else modes="procedures client"; fi
      for mode in $modes; do
        "$ENVBENCH" oltp --target "$url" --warehouses "$WAREHOUSES" --users "$users" --mode "$mode" --fresh \
          --ramp "$RAMP" --duration "$DURATION" --json 2>/dev/null >"$WORK/run.json"
        python3 - "$server" "$users" "$round" "$mode" "$WORK/run.json" >>"$summary" <<'EOF'
import json, sys
server, users, round_, mode, path = sys.argv[1:]
d = json.load(open(path))["oltp"]
step = d["steps"][0]
assert d["mode"] == mode, (d["mode"], mode)
failed = [c["name"] for c in d["consistency"] if not c["passed"]]
assert not failed, f"consistency failed: {failed}"
new_order = next(k for k in step["kinds"] if k["kind"] == "NewOrder")
print("\t".join(str(x) for x in [server, users, round_, mode, round(step["nopm"]), f"{new_order['p50_ms']:.2f}",
      f"{new_order['p95_ms']:.2f}", f"{step['client_cpu_us_per_transaction']:.0f}",
      round(step.get("server_tpm") or 0)]))
EOF
        tail -n 1 "$summary" | awk -F'\t' '{printf "%-8s users %s round %s %-10s NOPM %7s  New-Order p50 %6s ms p95 %6s ms  client CPU %5s us/tx  server TPM %s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9}'
      done
    done
  done
done
python3 - "$summary" <<'EOF'
import statistics, sys
from collections import defaultdict
runs = defaultdict(dict)
for line in open(sys.argv[1]):
    server, users, round_, mode, nopm, *_ = line.rstrip("\n").split("\t")
    runs[(server, users, round_)][mode] = float(nopm)
ratios = defaultdict(list)
for (server, users, _), modes in runs.items():
    if "client" in modes and "procedures" in modes:
        ratios[(server, users)].append(modes["procedures"] / modes["client"])
for (server, users), r in sorted(ratios.items()):
    print(f"{server} {users} user(s): NOPM procedures/client median {statistics.median(r):.2f} "
          f"(min {min(r):.2f}, max {max(r):.2f}, {len(r)} rounds)")
EOF
