#!/usr/bin/env bash
# Benchmark of envbench-tpch (not a test): at scale factor $SF (default 1)
#   1. data generation time and rows/s next to tpchgen-cli (same tpchgen version) writing the same Parquet;
#   2. the DataFusion power test (validation parameters, one stream) and its geometric mean;
#   3. DuckDB running the same 22 query texts on the same Parquet files, and the per-query ratio envbench/DuckDB.
# Both sides are release builds: the envbench side is the crate's example (the same code `envbench tpch` runs),
# sharing the release build cache with `cargo run --release -p envbench`.
set -euo pipefail

SF=${SF:-1}
TPCHGEN_CLI_VERSION=3.0.0
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
WORK=${WORK:-/tmp/envbench-tpch-bench}
CLI_ROOT=${CLI_ROOT:-/tmp/tpchgen-cli-$TPCHGEN_CLI_VERSION}
cd "$(dirname "$0")/.."
mkdir -p "$WORK"

# -p envbench too: the same package selection as the README's build, so the same features and no second DataFusion build.
cargo build --quiet --release -p envbench -p envbench-tpch --example tpch_bench
BENCH="$CARGO_TARGET_DIR/release/examples/tpch_bench"

if [ ! -x "$CLI_ROOT/bin/tpchgen-cli" ]; then
    echo "installing tpchgen-cli $TPCHGEN_CLI_VERSION into $CLI_ROOT (a release build; takes a while)" >&2
    cargo install --quiet --locked tpchgen-cli --version "$TPCHGEN_CLI_VERSION" --root "$CLI_ROOT"
fi

echo "== generation, SF $SF, $(nproc) CPUs"
rm -rf "$WORK/envbench" "$WORK/cli"
ENVBENCH_GEN=$("$BENCH" generate "$WORK/envbench" "$SF")
ENVBENCH_S=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['seconds'])" "$ENVBENCH_GEN")
ROWS=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['rows'])" "$ENVBENCH_GEN")
mkdir -p "$WORK/cli"
CLI_START=$(date +%s.%N)
"$CLI_ROOT/bin/tpchgen-cli" parquet --scale-factor "$SF" --compression SNAPPY --no-progress \
    --output-dir "$WORK/cli" >/dev/null
CLI_END=$(date +%s.%N)
python3 - "$ENVBENCH_S" "$CLI_START" "$CLI_END" "$ROWS" <<'PY'
import sys
envbench_s, start, end, rows = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
cli_s = end - start
print(f"envbench-tpch  {envbench_s:8.2f} s  {rows / envbench_s / 1e6:6.2f} M rows/s  ({rows} rows)")
print(f"tpchgen-cli    {cli_s:8.2f} s  {rows / cli_s / 1e6:6.2f} M rows/s")
print(f"ratio envbench/tpchgen-cli time: {envbench_s / cli_s:.2f}")
PY

echo "== DataFusion power test (validation parameters), SF $SF"
POWER=$("$BENCH" power "$WORK/envbench" "$SF")
"$BENCH" sql "$SF" "$WORK/sql"

echo "== DuckDB on the same Parquet files and query texts"
python3 -c "import duckdb" 2>/dev/null || pip install --quiet duckdb
python3 - "$WORK/envbench/sf$SF" "$WORK/sql" "$POWER" <<'PY'
import json, math, os, sys, time
import duckdb

data_dir, sql_dir, power = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
con = duckdb.connect()
con.execute(f"SET threads = {os.cpu_count()}")
for table in ["region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"]:
    con.execute(f"CREATE VIEW {table} AS SELECT * FROM read_parquet('{data_dir}/{table}/*.parquet')")
# The same order as the power test (stream 0 of the specification's permutation table).
order = [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12]
duck = {}
for q in order:
    sql = open(f"{sql_dir}/Q{q}.sql").read()
    start = time.perf_counter()
    con.execute(sql).fetchall()
    duck[q] = time.perf_counter() - start
print(f"{'query':>6} {'envbench s':>11} {'DuckDB s':>9} {'ratio':>7}")
for q in range(1, 23):
    e = power["queries"][f"Q{q}"]
    print(f"{'Q' + str(q):>6} {e:11.3f} {duck[q]:9.3f} {e / duck[q]:7.2f}")
geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
duck_geo = geo(list(duck.values()))
print(f"{'geomean':>6} {power['geomean']:11.3f} {duck_geo:9.3f} {power['geomean'] / duck_geo:7.2f}")
print(f"envbench failures: {power['failures']}; DuckDB {duckdb.__version__}")
PY
