#!/usr/bin/env bash
# Benchmark of the results service (not a test): `envbench serve --accept-uploads` on a loopback port over a store of
# its own, filled to $RUNS runs (default 10000) by uploads of $BATCH runs each (default 100), then its pages read
# $READS times each (default 50):
#  1. uploads: runs taken per second, and each upload's latency (p50, p95), as the store grows;
#  2. pages with $RUNS stored runs: the run list, the environments, one run (with its percentiles), the leaderboard,
#     and the read API (what `compare https://host/...` asks); p50 and p95 latency;
#  3. the same pages once a run of 2 x 400,001 samples is stored too, and that run's own page: it exits 1 unless every
#     page's p95 (the read API's one run aside, which gives every sample) stays within 2x of its p95 without it.
# The runs are one real `envbench exec` run, uploaded under new ids with its samples scaled a little each time (so no
# two are copies); every upload passes the service's checks, headlines recomputed from the samples included.
#
#   bench/service-load.sh                                  # release build
#   ENVBENCH=target/debug/envbench RUNS=2000 bench/service-load.sh
set -euo pipefail

RUNS=${RUNS:-10000}
BATCH=${BATCH:-100}
READS=${READS:-50}
WORK=${WORK:-/tmp/envbench-service-load}
cd "$(dirname "$0")/.."
rm -rf "$WORK"
mkdir -p "$WORK"

. bench/envbench.sh
export NO_COLOR=1
unset ALL_PROXY HTTPS_PROXY HTTP_PROXY all_proxy https_proxy http_proxy

# One real run, and the upload push would send for it.
"$ENVBENCH" --store "$WORK/mine.db" exec --dir "$WORK" --name job --repeat 5 --step 'wait=sleep 0.001' \
  --label load >/dev/null 2>&1
"$ENVBENCH" --store "$WORK/mine.db" push http://127.0.0.1:1/ --dry-run >"$WORK/upload.json"
"$ENVBENCH" --store "$WORK/service.db" results token create --name load >"$WORK/token" 2>/dev/null

"$ENVBENCH" --store "$WORK/service.db" serve --accept-uploads --listen 127.0.0.1:0 \
  --max-uploads-per-hour 1000000 --max-runs-per-upload "$BATCH" 2>"$WORK/serve.log" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do grep -q 'http://' "$WORK/serve.log" && break; sleep 0.1; done
address=$(grep -o 'http://[0-9.:]*' "$WORK/serve.log" | head -n 1)
echo "== $(nproc) CPUs; $RUNS runs in uploads of $BATCH; service $address over SQLite; $($ENVBENCH --version)"

python3 - "$address" "$WORK/upload.json" "$WORK/token" "$RUNS" "$BATCH" "$READS" <<'PYTHON'
import copy, json, statistics, sys, time, urllib.request, uuid

address, upload_file, token_file, runs, batch, reads = sys.argv[1:7]
runs, batch, reads = int(runs), int(batch), int(reads)
template = json.load(open(upload_file))["runs"][0]
token = open(token_file).read().strip()

def median(samples):
    s = sorted(samples)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2

def run(i):
    r = copy.deepcopy(template)
    r["run"]["uuid"] = str(uuid.uuid4())
    factor = 1 + i * 1e-6
    for result, headline in zip(r["run"]["results"], r["headlines"]):
        result["samples"] = [v * factor for v in result["samples"]]
        headline["median"] = median(result["samples"])
    return r

def post(body):
    request = urllib.request.Request(address + "/api/v1/runs", data=body, method="POST", headers={
        "Authorization": "Bearer " + token, "Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request) as answer:
        outcomes = json.load(answer)["runs"]
    assert all(o["outcome"] == "accepted" for o in outcomes), outcomes[:3]
    return time.perf_counter() - started

def p(values, q):
    return statistics.quantiles(values, n=100)[q - 1] if len(values) > 1 else values[0]

latencies, sent, started, first = [], 0, time.perf_counter(), None
checkpoint = max(runs // 4, batch)
while sent < runs:
    n = min(batch, runs - sent)
    made = [run(sent + i) for i in range(n)]
    first = first or made[0]["run"]["uuid"]
    body = json.dumps({"format": 1, "runs": made}).encode()
    latencies.append(post(body))
    sent += n
    if sent % checkpoint < batch or sent == runs:
        elapsed = time.perf_counter() - started
        print(f"uploads: {sent:6d} runs stored, {sent / elapsed:7.1f} runs/s so far; upload of {batch} runs "
              f"p50 {p(latencies, 50) * 1000:.0f} ms, p95 {p(latencies, 95) * 1000:.0f} ms")

def get(path):
    started = time.perf_counter()
    with urllib.request.urlopen(address + path) as answer:
        answer.read()
    return time.perf_counter() - started

pages = {"/": "the run list", "/environments": "the environments", "/run/" + first: "one run",
         "/leaderboard?workload=exec": "the leaderboard",
         "/api/v1/runs?limit=100": "API: 100 runs", "/api/v1/runs/" + first[:8]: "API: one run",
         "/api/v1/leaderboard?workload=exec": "API: leaderboard"}

def measure(label):
    p95 = {}
    for path, name in pages.items():
        times = [get(path) for _ in range(reads)]
        p95[name] = p(times, 95)
        print(f"page {name:16s}: p50 {p(times, 50) * 1000:7.1f} ms, p95 {p95[name] * 1000:7.1f} ms {label}")
    return p95

before = measure(f"with {runs} runs stored")

# The same pages once a run of 2 x 400,001 samples is stored (the largest legal upload of issue #54, E3): the newest,
# so first on the run list and in its environment's leaderboard figure. Its own page is timed beside one run's.
big = run(runs)
for result in big["run"]["results"][:2]:
    result["samples"] = [0.001 + (i * 7919 % 400001) * 1e-6 for i in range(400001)]
big["headlines"] = [dict(h, samples=len(r["samples"]), median=median(r["samples"]))
                    for h, r in zip(big["headlines"], big["run"]["results"])]
started = time.perf_counter()
post(json.dumps({"format": 1, "runs": [big]}).encode())
print(f"upload of one run of 2 x 400,001 samples: {time.perf_counter() - started:.1f} s")
pages["/run/" + big["run"]["uuid"]] = "the big run"
after = measure(f"with it stored too")
worst = max(after[name] / before[name] for name in before if name != "API: one run")
print(f"worst page p95 with the big run against without: {worst:.2f}x (at most 2x: "
      f"{'yes' if worst <= 2 else 'NO'}); the big run's page {after['the big run'] / before['one run']:.2f}x one run's")
sys.exit(0 if worst <= 2 and after["the big run"] <= 2 * before["one run"] else 1)
PYTHON
