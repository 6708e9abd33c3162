#!/usr/bin/env bash
# Benchmark of envbench's OLTP driver (not a test): is envbench's own client the bottleneck, and is its work the same
# as pgbench's? Two parts:
#  1. TPS. On the local PostgreSQL ($URL), pgbench's TPC-B-like transaction at scale $SCALE (default 10) with $CLIENTS
#     clients (default 8) for $SECONDS_EACH seconds (default 60), run by envbench (`oltp --profile tpcb`) and by
#     pgbench itself (`-M prepared`, one thread per client), alternating, $ROUNDS rounds (default 3), on the same
#     tables. Prints each round's TPS and the ratio envbench/pgbench; the goal is 0.95 or more.
#  2. Equal work. On a private cluster of its own with pg_stat_statements loaded, each tool runs $COUNTED
#     transactions per client (default 2000, 4 clients) on the same tables, and the server counts what it was sent,
#     side by side: each statement's calls per transaction (pg_stat_statements), every statement the server logged
#     (log_statement = 'all': BEGIN and END sent through the extended protocol too, which pg_stat_statements does not
#     count), the client's socket sends per transaction (strace: a send is a round trip, as neither tool pipelines),
#     and the client's own CPU time per transaction (in a run of its own, without strace).
# ENVBENCH names a binary to use instead of this tree's release build (bench/envbench.sh); SKIP_TPS=1 runs part 2 only.
set -euo pipefail

SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-8}
SECONDS_EACH=${SECONDS_EACH:-60}
ROUNDS=${ROUNDS:-3}
COUNTED=${COUNTED:-2000}
URL=${URL:-postgres://postgres@127.0.0.1:5432/test}
WORK=${WORK:-/tmp/envbench-oltp-bench}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

. bench/envbench.sh
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
PGBENCH="$bin/pgbench"
export ENVBENCH_STORE="$WORK/results.db"

if [ "${SKIP_TPS:-0}" != 1 ]; then
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
fi

# Part 2: a private cluster whose server counts every statement.
command -v strace >/dev/null || { echo "bench/oltp-vs-pgbench.sh: part 2 needs strace (apt-get install strace)" >&2; exit 2; }
. bench/private-cluster.sh
private_cluster oltp-work <<CONF
shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
pg_stat_statements.track_utility = on
logging_collector = on
log_destination = 'csvlog'
log_directory = 'log'
log_filename = 'pg'
log_statement = 'all'
CONF
counted_url="postgres://postgres@127.0.0.1:$port/bench"
psql -d postgres -c "CREATE DATABASE bench"
psql -d bench -c "CREATE EXTENSION pg_stat_statements"
"$ENVBENCH" oltp --target "$counted_url" --profile tpcb --scale 1 --users 1 --ramp 0s --duration 1s >/dev/null

counted_clients=4
for tool in envbench pgbench; do
  psql -d bench -c "SELECT pg_stat_statements_reset()" >/dev/null
  case $tool in
    envbench) command=("$ENVBENCH" oltp --target "$counted_url" --profile tpcb --scale 1 --users "$counted_clients"
                       --transactions "$COUNTED" --ramp 0s --no-vacuum) ;;
    pgbench) command=("$PGBENCH" -n -M prepared -b tpcb-like -c "$counted_clients" -j "$counted_clients"
                      -t "$COUNTED" "$counted_url") ;;
  esac
  # The client's own CPU time, in a run of its own (strace's would be in it); and the server's: its sessions' CPU
  # time, which the postmaster collects as each one ends (its children's user and system ticks, /proc's fields 16
  # and 17).
  server_ticks() { awk '{print $16 + $17}' "/proc/$(head -n 1 "$cluster/data/postmaster.pid")/stat"; }
  ticks_before=$(server_ticks)
  /usr/bin/time -f "%U %S" -o "$cluster/$tool.cpu" "${command[@]}" >/dev/null 2>&1
  sleep 1
  echo $(( $(server_ticks) - ticks_before )) > "$cluster/$tool.server-ticks"
  psql -d bench -c "SELECT pg_stat_statements_reset()" >/dev/null
  logged_before=$(stat -c %s "$cluster/data/log/pg.csv")
  strace -f -qq -c -e trace=sendto,sendmsg,write,writev -o "$cluster/$tool.strace" "${command[@]}" >/dev/null 2>&1
  sleep 1
  # Every statement the server logged for the bench database meanwhile, simple queries and extended executes.
  tail -c +$((logged_before + 1)) "$cluster/data/log/pg.csv" | grep -a ',"bench",' |
    grep -a -c -E ',"(statement: |execute [^:]*: )' > "$cluster/$tool.logged" || true
  # The statements the server ran for the bench database, less this query's own kind.
  psql -d bench -F $'\t' -c "SELECT calls, regexp_replace(query, '\s+', ' ', 'g') FROM pg_stat_statements
                             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = 'bench')
                               AND query NOT LIKE '%pg_stat_statements%' ORDER BY calls DESC, query" > "$cluster/$tool.calls"
done

python3 - "$cluster" "$((COUNTED * counted_clients))" "$counted_clients" <<'PY'
import re, sys
work, transactions, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def calls(tool):
    rows = []
    for line in open(f"{work}/{tool}.calls"):
        count, query = line.rstrip("\n").split("\t", 1)
        rows.append((int(count), query))
    return rows

def logged(tool):
    return int(open(f"{work}/{tool}.logged").read())

def server_cpu(tool):
    return int(open(f"{work}/{tool}.server-ticks").read()) / __import__("os").sysconf("SC_CLK_TCK")

def cpu(tool):
    user, system = open(f"{work}/{tool}.cpu").read().split()[-2:]
    return float(user) + float(system)

def sends(tool):
    # strace -c: "% time seconds usecs/call calls errors syscall"; socket sends are sendto and sendmsg (a write to a
    # socket would be a send too: both tools' libraries use send).
    found = {}
    for line in open(f"{work}/{tool}.strace"):
        parts = line.split()
        if parts and parts[-1] in ("sendto", "sendmsg", "write", "writev"):
            found[parts[-1]] = int(parts[3])
    return found

print(f"\n== equal work: {transactions} transactions each ({clients} clients), as the server counted them")
per = {}
for tool in ("envbench", "pgbench"):
    rows = calls(tool)
    # A statement run about once a transaction or more is the transaction's; the rest is the tool's own setup.
    in_transaction = [(c, q) for c, q in rows if c >= transactions * 0.5]
    setup = [(c, q) for c, q in rows if c < transactions * 0.5]
    per[tool] = (sum(c for c, _ in in_transaction) / transactions, sum(c for c, _ in setup), len(setup))
    print(f"\n{tool}: statements per transaction, by statement")
    for c, q in in_transaction:
        print(f"  {c / transactions:5.2f}  {q[:100]}")
    print(f"  and {sum(c for c, _ in setup)} calls of {len(setup)} statements outside the transactions (its setup):")
    for c, q in setup:
        print(f"    {c:5d}  {q[:96]}")
print()
print(f"{'':<36} {'envbench':>10} {'pgbench':>10}")
print(f"{'statements per transaction':<36} {per['envbench'][0]:>10.2f} {per['pgbench'][0]:>10.2f}")
print(f"{'setup statements in all':<36} {per['envbench'][1]:>10} {per['pgbench'][1]:>10}")
print(f"{'statements logged per transaction':<36} {logged('envbench') / transactions:>10.2f} {logged('pgbench') / transactions:>10.2f}")
for name in ("sendto", "sendmsg", "write", "writev"):
    e, p = sends("envbench").get(name, 0), sends("pgbench").get(name, 0)
    if e or p:
        print(f"{name + ' calls per transaction':<36} {e / transactions:>10.2f} {p / transactions:>10.2f}")
print(f"{'client CPU per transaction (us)':<36} {cpu('envbench') / transactions * 1e6:>10.0f} {cpu('pgbench') / transactions * 1e6:>10.0f}")
print(f"{'server CPU per transaction (us)':<36} {server_cpu('envbench') / transactions * 1e6:>10.0f} {server_cpu('pgbench') / transactions * 1e6:>10.0f}")
print("(pg_stat_statements does not count statements of transaction control sent through the extended protocol,")
print(" as pgbench -M prepared sends BEGIN and END; the log and the sends count them.)")
PY
