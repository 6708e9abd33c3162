#!/usr/bin/env bash
# Benchmark of envbench's own cost as the work grows (not a test): the results store at 100 and 100,000 runs.
#
# Stores are copies of one real suite (`envbench run --smoke`, six runs) made by bench/store-fill.py: a SQLite store
# of about 100 runs and one of about 100,000 (labels a and b 1,000 runs each, the rest spread over 48 more labels),
# and the same two in PostgreSQL (schemas of their own, filled by `envbench push`, which is timed too). Then, at each
# size, the median of $REPEATS timings (default 3) of:
#  - `results list` (the newest 100) and `results list --label a`;
#  - `compare label:a label:b` and `report label:a label:b`: sides of 1,000 runs each, in a store of those 2,000 runs
#    alone and in the store of 100,000 (at 100 runs, sides of six);
#  - the viewer's pages: the run list, suites, environments, one environment, the leaderboard, one run, and the
#    compare page of label:a and label:b.
# It prints each figure at both sizes and the ratio (the target: within 2x), and `push`'s runs per second (the
# target: 10,000 runs to PostgreSQL at 500 runs a second or more).
#
# Then the TPC-C load (PARTS has "load"): oltp's load at each warehouse count of $WAREHOUSES (default "1 10 50") on
# each server of $SERVERS (default "postgres mariadb", databases envbench_load of their own, dropped after), with
# $LOADERS loaders (default one per CPU, as HammerDB's build uses a virtual user per CPU), and its rows per second,
# seconds per warehouse and growth per 10x of warehouses (linear: 10x).
#
#   bench/scale.sh                                   # release build, both parts
#   RUNS=20000 STORES=sqlite PARTS=store bench/scale.sh   # a smaller store, SQLite only
#   PARTS=load WAREHOUSES="1 10" bench/scale.sh      # the load only
set -euo pipefail

RUNS=${RUNS:-100000}
REPEATS=${REPEATS:-3}
STORES=${STORES:-sqlite postgres}
PG=${PG:-postgres://postgres@127.0.0.1:5432/test}
WORK=${WORK:-/tmp/envbench-scale}
PARTS=${PARTS:-store load}
WAREHOUSES=${WAREHOUSES:-1 10 50}
SERVERS=${SERVERS:-postgres mariadb}
LOADERS=${LOADERS:-$(nproc)}
cd "$(dirname "$0")/.."
rm -rf "$WORK"
mkdir -p "$WORK"

. bench/envbench.sh
export NO_COLOR=1
unset ALL_PROXY HTTPS_PROXY HTTP_PROXY all_proxy https_proxy http_proxy

if [[ " $PARTS " == *" store "* ]]; then

"$ENVBENCH" --store "$WORK/template.db" run --smoke --dir "$WORK" --report "$WORK/template.html" >/dev/null 2>&1
per_suite=$("$ENVBENCH" --store "$WORK/template.db" results list --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
python3 bench/store-fill.py "$WORK/template.db" "$WORK/small.db" $((100 / per_suite - 1))
python3 bench/store-fill.py "$WORK/template.db" "$WORK/large.db" $((RUNS / per_suite - 1))
python3 bench/store-fill.py "$WORK/template.db" "$WORK/sides.db" $((2000 / per_suite)) pairs
python3 bench/store-fill.py "$WORK/template.db" "$WORK/push.db" $((10000 / per_suite - 1)) spread

ENVBENCH="$ENVBENCH" WORK="$WORK" RUNS="$RUNS" REPEATS="$REPEATS" STORES="$STORES" PG="$PG" python3 - <<'PYTHON'
import json, os, statistics, subprocess, sys, time, urllib.request

envbench, work, repeats = os.environ["ENVBENCH"], os.environ["WORK"], int(os.environ["REPEATS"])
pg = os.environ["PG"]

def run(store, *args, check=True):
    started = time.perf_counter()
    done = subprocess.run([envbench, "--store", store, *args], capture_output=True, text=True)
    took = time.perf_counter() - started
    if check and done.returncode != 0:
        sys.exit(f"envbench {' '.join(args)}: {done.stderr.strip()}")
    return took, done

def median_time(store, *args):
    return statistics.median(run(store, *args)[0] for _ in range(repeats))

def pg_schema(name):
    subprocess.run(["psql", "-q", pg.replace("postgres://", "postgresql://"), "-c",
                    f"DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"], check=True, capture_output=True)
    return f"{pg}?options=-c%20search_path%3D{name}"

stores = {}
for kind in os.environ["STORES"].split():
    files = {size: f"{work}/{size}.db" for size in ("small", "large", "sides")}
    if kind == "sqlite":
        stores[kind] = files
        continue
    stores[kind] = {}
    for size, file in files.items():
        url = pg_schema(f"envbench_scale_{size}")
        took, done = run(file, "push", "--to", url, "--json")
        copied = len(json.loads(done.stdout)["copied"])
        print(f"push {copied} runs to PostgreSQL ({size}): {took:.1f} s, {copied / took:.0f} runs/s")
        stores[kind][size] = url

url = pg_schema("envbench_scale_push")
took, done = run(f"{work}/push.db", "push", "--to", url, "--json")
copied = len(json.loads(done.stdout)["copied"])
print(f"push of {copied} runs to a fresh PostgreSQL store: {took:.1f} s, {copied / took:.0f} runs/s (target 500)")
took, done = run(f"{work}/push.db", "push", "--to", f"{work}/pushed.db", "--json")
print(f"push of {copied} runs to a fresh SQLite store: {took:.1f} s, {copied / took:.0f} runs/s")

def pages(store):
    server = subprocess.Popen([envbench, "--store", store, "serve", "--listen", "127.0.0.1:0"],
                              stderr=subprocess.PIPE, text=True)
    try:
        address = None
        for line in server.stderr:
            if "http://" in line:
                address = "http://" + line.split("http://", 1)[1].split()[0].rstrip("/")
                break
        def get(path):
            started = time.perf_counter()
            with urllib.request.urlopen(address + path, timeout=600) as answer:
                answer.read()
            return time.perf_counter() - started
        runs = json.loads(run(store, "results", "list", "--json", "--limit", "1")[1].stdout)
        environment = json.loads(run(store, "results", "environments", "--json")[1].stdout)[0]["identity"]["id"]
        paths = {"viewer: run list": "/", "viewer: suites": "/suites", "viewer: environments": "/environments",
                 "viewer: one environment": f"/environment/{environment}",
                 "viewer: leaderboard": "/leaderboard", "viewer: one run": f"/run/{runs[0]['uuid']}",
                 "viewer: compare a b": "/compare?side=label:a&side=label:b"}
        return {name: statistics.median(get(path) for _ in range(repeats)) for name, path in paths.items()}
    finally:
        server.terminate()
        server.wait()

rows = []
for kind, sizes in stores.items():
    figures = {}
    for size in ("small", "large", "sides"):
        store = sizes[size]
        figures[size] = {
            "results list": median_time(store, "results", "list"),
            "results list --label a": median_time(store, "results", "list", "--label", "a"),
            "compare label:a label:b": median_time(store, "compare", "label:a", "label:b"),
            "report label:a label:b": median_time(store, "report", "label:a", "label:b", "-o",
                                                  f"{work}/report-{kind}-{size}.html", "--force"),
        }
        figures[size].update(pages(store))
    for name in figures["small"]:
        # Sides of 1,000 runs are compared in a store of them alone; the rest against the store of about 100 runs.
        base = "sides" if "label:a" in name or "compare a b" in name else "small"
        rows.append((kind, name, base, figures[base][name], figures["large"][name]))

print()
print(f"{'store':9} {'what':28} {'baseline store':22} {'baseline':>10} {'100,000 runs':>13} {'ratio':>7}")
for kind, name, base, small, large in rows:
    baseline = "2,000 runs (the sides)" if base == "sides" else "about 100 runs"
    print(f"{kind:9} {name:28} {baseline:22} {small * 1000:8.0f} ms {large * 1000:10.0f} ms {large / small:6.2f}x")
PYTHON
fi

if [[ " $PARTS " == *" load "* ]]; then
  echo
  echo "== TPC-C load, $LOADERS loaders, $(nproc) CPUs"
  for server in $SERVERS; do
    case $server in
      postgres)
        PGOPTIONS=--client-min-messages=warning psql "${PG/postgres:\/\//postgresql://}" -qc "DROP DATABASE IF EXISTS envbench_load" -c "CREATE DATABASE envbench_load"
        url="${PG%/*}/envbench_load" ;;
      mariadb)
        mysql --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e "DROP DATABASE IF EXISTS envbench_load; CREATE DATABASE envbench_load"
        url="mysql://root@127.0.0.1:3306/envbench_load" ;;
    esac
    for warehouses in $WAREHOUSES; do
      "$ENVBENCH" --store "$WORK/loads.db" oltp --target "$url" --warehouses "$warehouses" --loaders "$LOADERS" --fresh \
        --users 1 --ramp 0s --duration 1s --no-vacuum --json 2>/dev/null |
        python3 -c "import json,sys; l=json.load(sys.stdin)['oltp']['load']; print('$server', $warehouses, l['rows'], l['seconds'], l['loaders'])" \
        >> "$WORK/loads.txt"
      "$ENVBENCH" --store "$WORK/loads.db" oltp --target "$url" --drop >/dev/null 2>&1
    done
    case $server in
      postgres) psql "${PG/postgres:\/\//postgresql://}" -qc "DROP DATABASE envbench_load" ;;
      mariadb) mysql --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e "DROP DATABASE envbench_load" ;;
    esac
  done
  python3 - "$WORK/loads.txt" <<'PYTHON'
import sys
rows = [line.split() for line in open(sys.argv[1])]
print(f"{'server':9} {'warehouses':>10} {'rows':>12} {'seconds':>9} {'rows/s':>10} {'s/warehouse':>12} {'growth per 10x':>15}")
previous = {}
for server, warehouses, count, seconds, loaders in rows:
    warehouses, count, seconds = int(warehouses), int(count), float(seconds)
    growth = ""
    if server in previous:
        w0, s0 = previous[server]
        # The time's growth scaled to 10x of warehouses (linear: 10x).
        growth = f"{(seconds / s0) ** (1 / __import__('math').log10(warehouses / w0)):.2f}x"
    previous[server] = (warehouses, seconds)
    print(f"{server:9} {warehouses:>10} {count:>12,} {seconds:>9.1f} {count / seconds:>10,.0f} {seconds / warehouses:>12.2f} {growth:>15}")
print("HammerDB 4.12's schema build is not beside it: HammerDB is in none of the registries this host may install from")
print("(Debian, PyPI, npm, crates.io), and nothing else downloads here.")
PYTHON
fi
