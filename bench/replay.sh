#!/usr/bin/env bash
# bench/replay.sh [STATEMENTS]: capture pgbench's TPC-B-like workload (about STATEMENTS statements, one million by
# default) on a private PostgreSQL cluster that logs every statement to csvlog, then replay it read-only with envbench
# at 1x and 4x into a second database loaded the same way. Prints the log parser's rate (envbench replay inspect),
# each replay's peak memory and schedule lag p99, and per statement pgbench's own mean latency (pgbench -r) beside the
# replay's mean service time and the capture's own durations.
#
# Needs PostgreSQL's server programs (initdb, pg_ctl, pgbench) and a release build (ENVBENCH=path to override).
set -euo pipefail
cd "$(dirname "$0")/.."

statements=${1:-1000000}
envbench=${ENVBENCH:-target/release/envbench}
[ -x "$envbench" ] || { echo "bench/replay.sh: build envbench first: cargo build --release -p envbench" >&2; exit 2; }
. bench/private-cluster.sh
private_cluster replay-bench <<EOF
logging_collector = on
log_destination = 'csvlog'
log_directory = 'log'
log_filename = 'pg'
log_connections = on
log_disconnections = on
EOF
work=$cluster
pgbench() { "$bin/pgbench" -h 127.0.0.1 -p "$port" -U postgres "$@"; }
for database in bench target; do
  psql -d postgres -c "CREATE DATABASE $database"
  pgbench -i -q -s 10 "$database" >/dev/null 2>&1
done

# The capture: every statement with its duration (docs/replay.md), pgbench's seven statements a transaction.
psql -d postgres -c "ALTER SYSTEM SET log_min_duration_statement = 0" -c "SELECT pg_reload_conf()" >/dev/null
clients=4
transactions=$(( statements / 7 / clients ))
pgbench -n -c "$clients" -j 2 -t "$transactions" -M prepared -r bench > "$work/pgbench.out" 2>&1
psql -d postgres -c "ALTER SYSTEM SET log_min_duration_statement = -1" -c "SELECT pg_reload_conf()" >/dev/null
sleep 1
cp "$work/data/log/pg.csv" "$work/capture.csv"
# pgbench's own per-statement latencies without the logging, as the replay's target runs.
pgbench -n -c "$clients" -j 2 -t "$transactions" -M prepared -r bench > "$work/pgbench-quiet.out" 2>&1
bytes=$(stat -c %s "$work/capture.csv")

# The parser: one pass over the capture.
/usr/bin/time -f "%e %M" -o "$work/inspect.time" "$envbench" replay inspect "$work/capture.csv" --json > "$work/inspect.json"
read -r inspect_s inspect_kb < "$work/inspect.time"
captured=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['statements'])" "$work/inspect.json")

for speed in 1 4; do
  /usr/bin/time -f "%e %M" -o "$work/replay-$speed.time" "$envbench" --store "$work/results.db" replay "$work/capture.csv" \
    --target "postgres://postgres@127.0.0.1:$port/target" --database bench --speed "$speed" --label "x$speed" --json \
    > "$work/replay-$speed.json"
done

python3 - "$work" "$bytes" "$inspect_s" "$inspect_kb" "$captured" <<'EOF'
import json, re, sys
work, size, inspect_s, inspect_kb, captured = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
print(f"capture: {captured:,} statements, {size / 1e6:.0f} MB of csvlog")
print(f"parser (replay inspect): {inspect_s:.2f} s, {size / 1e6 / max(inspect_s, 1e-9):.0f} MB/s, "
      f"{captured / max(inspect_s, 1e-9):,.0f} statements/s, peak memory {inspect_kb / 1024:.0f} MiB")
outcomes = {}
for speed in (1, 4):
    outcome = json.load(open(f"{work}/replay-{speed}.json"))["replay"]["outcome"]
    elapsed, kb = open(f"{work}/replay-{speed}.time").read().split()
    outcomes[speed] = outcome
    print(f"replay at {speed}x: {outcome['replayed']:,} statements sent, {outcome['skipped_writes']:,} writes skipped, "
          f"{outcome['failed']} failed; {outcome['captured_seconds']:.1f} s captured, {outcome['replayed_seconds']:.1f} s "
          f"replayed; schedule lag p99 {outcome['lag_p99_ms']:.2f} ms (max {outcome['lag_max_ms']:.1f} ms), "
          f"{outcome.get('late', 0):,} late over 1 ms; peak memory "
          f"{int(kb) / 1024:.0f} MiB")
# pgbench -r: each statement's mean latency in ms, in its script's order.
def latencies(name):
    found = {}
    for line in open(f"{work}/{name}"):
        m = re.match(r"\s+([0-9.]+)\s+\d+\s+(.*\S)\s*$", line) or re.match(r"\s+([0-9.]+)\s+(.*\S)\s*$", line)
        if m and not m.group(2).startswith("\\"):
            found[m.group(2).rstrip(";").lower()] = float(m.group(1))
    return found
logged, quiet = latencies("pgbench.out"), latencies("pgbench-quiet.out")
print()
print("pgbench ms: its own mean latency per statement (-r) while captured (logging every statement) and in a run")
print("without logging; captured ms: the server's own durations in the capture; service: the replay's mean from the send")
print(f"{'statement':<62} {'pgbench ms':>10} {'(no log)':>9} {'captured ms':>11} {'1x service':>10} {'4x service':>10}")
for f in sorted(outcomes[1]["fingerprints"], key=lambda f: -f["calls"] - f["skipped"])[:8]:
    text = f["fingerprint"]
    # pgbench writes its statements with :variables; match them by their first words.
    words = " ".join(text.split()[:3])
    mean = next((v for k, v in logged.items() if k.startswith(words)), None)
    bare = next((v for k, v in quiet.items() if k.startswith(words)), None)
    cap = f["captured_ms"] / f["captured_timed"] if f["captured_timed"] else None
    svc = {s: next(g for g in outcomes[s]["fingerprints"] if g["fingerprint"] == text) for s in (1, 4)}
    def per(g):
        return f"{g['service_ms'] / g['calls']:.3f}" if g["calls"] else "skipped"
    print(f"{text[:62]:<62} {mean if mean is not None else '-':>10} {bare if bare is not None else '-':>9} "
          f"{f'{cap:.3f}' if cap else '-':>11} {per(svc[1]):>10} {per(svc[4]):>10}")
EOF
