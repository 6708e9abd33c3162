#!/usr/bin/env bash
# Is the verdict calibrated? (specification section 13.) A verdict is a measurement too: this script measures how
# often `envbench compare` calls a change when nothing changed, and how often it finds a change this script made.
#
# Each round runs every workload four times in this environment and stores each run under its own label:
#   a      the baseline;
#   a2     the same environment again (the A/A pair a-a2: any "faster" or "slower" is a false alarm);
#   cpu    under taskset on half the CPUs (A/B: the CPU-bound workloads should read slower);
#   io     in a cgroup whose reads and writes on the data directory's disk are held to half the IOPS the round's a
#          run reached on each (cgroup v2 io.max, or the v1 blkio throttle where v2 is not mounted; A/B: the storage
#          workload should read slower);
#   busy   beside a CPU hog on every CPU, as on a shared host whose neighbours woke up (a disturbed A/B pair: the
#          sampler flags the runs, and the verdict must say "slower" or "cannot tell", never "about the same" and never
#          "faster").
# Then it compares a-a2, a-cpu, a-io and a-busy with `envbench compare --json` and counts, per workload, the
# false-alarm rate (A/A verdicts that say faster or slower) and the detection rate (A/B verdicts that say slower).
# "cannot tell" is counted apart: it is neither an alarm nor a detection; so are the A/A alarms whose verdict names a
# side the sampler found disturbed (the verdict says the change may be the other work's). For the disturbed pair it
# counts the right answers (slower, or cannot tell) and the wrong ones (about the same, faster); any wrong answer
# fails the script (exit 1) outside SMOKE=1.
#
# With RUNS=N each side is N runs, taken in turn (a, a2, cpu, a, a2, cpu, ...) so that a shared host's slow minutes
# fall on every side alike; a side pools its runs, as `compare` does with several runs under one label. On a VM whose
# host lends it more or less CPU from one minute to the next, one run a side cannot tell that from the environment.
#
# Targets: at most 5% false alarms; at least 90% detection of the 2x CPU change on the CPU-bound workloads (cube,
# tpch) and of the 2x throttle on storage (disk, ranread: its throttle is half the IOPS disk's QD1 tests reached, so
# ranread's A/B pair needs disk in WORKLOADS too).
#
# Usage: bench/verdict-calibration.sh [ROUNDS]   (default 5; needs root for the cgroup, and 2 CPUs or more)
# Environment: DIR (data directory, default /var/tmp/envbench-calibration; its disk is the one throttled),
#   ENVBENCH (the binary; default: a release build), WORKLOADS ("cube disk ranread tpch"), RUNS (runs a side, 1),
#   CUBE_SCALE (0.02), TPCH_SF (0.1, the quick suite's), SMOKE=1 (tiny sizes, for the test that runs this script: its
#   rates say nothing), KEEP=1 (keep the store of the runs, to judge them again with another build: `envbench compare
#   r1-a r1-a2 --json` and so on).
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${1:-5}
RUNS=${RUNS:-1}
DIR=${DIR:-/var/tmp/envbench-calibration}
WORKLOADS=${WORKLOADS:-cube disk ranread tpch}
SMOKE=${SMOKE:-0}
case "$ROUNDS" in '' | *[!0-9]* | 0) echo "calibration: ROUNDS must be a whole number above 0, got '$ROUNDS'" >&2; exit 2 ;; esac
case "$RUNS" in '' | *[!0-9]* | 0) echo "calibration: RUNS must be a whole number above 0, got '$RUNS'" >&2; exit 2 ;; esac
. bench/envbench.sh
CPUS=$(nproc)
if [ "$CPUS" -lt 2 ]; then
  echo "calibration: halving the CPUs needs at least 2, this process may use $CPUS" >&2
  exit 2
fi
HALF=$((CPUS / 2))
# The throttled runs only test storage: without disk in WORKLOADS they have no throttle and are left out.
STORAGE=0
PAIRS="a2 cpu busy"
if [[ " $WORKLOADS " == *" disk "* ]]; then
  STORAGE=1
  PAIRS="a2 cpu io busy"
fi
mkdir -p "$DIR" "$DIR/cube" "$DIR/disk" "$DIR/ranread" "$DIR/tpch"
WORK=$(mktemp -d "$DIR/calibration.XXXXXX")
export ENVBENCH_STORE="$WORK/results.db"
CGROUP=""
HOGS=()
cleanup() {
  [ "${#HOGS[@]}" -gt 0 ] && kill "${HOGS[@]}" 2>/dev/null
  [ -n "$CGROUP" ] && rmdir "$CGROUP" 2>/dev/null
  if [ "${KEEP:-0}" = 1 ]; then
    echo "calibration: the runs are kept in $ENVBENCH_STORE" >&2
  else
    rm -rf "$WORK"
  fi
  # ranread keeps its database file between runs (it is filled once); it goes with the calibration.
  rm -f "$DIR/ranread/envbench-ranread.dat" "$DIR/ranread/envbench-ranread.lock" 2>/dev/null
}
trap cleanup EXIT

# The whole disk under DIR, as MAJ:MIN: throttles apply to a disk, not to one of its partitions.
device=$(stat -c '%d' "$DIR")
disk="$((device >> 8)):$((device & 255))"
if [ -e "/sys/dev/block/$disk/partition" ]; then
  disk=$(cat "/sys/dev/block/$disk/../dev")
fi

# A cgroup the io runs join, and how to set its limits.
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
  grep -qw io /sys/fs/cgroup/cgroup.subtree_control || echo +io >/sys/fs/cgroup/cgroup.subtree_control
  CGROUP=/sys/fs/cgroup/envbench-calibration-$$
  mkdir "$CGROUP"
  throttle() { echo "$disk riops=$1 wiops=$2" >"$CGROUP/io.max"; }
elif [ -d /sys/fs/cgroup/blkio ]; then
  CGROUP=/sys/fs/cgroup/blkio/envbench-calibration-$$
  mkdir "$CGROUP"
  throttle() {
    echo "$disk $1" >"$CGROUP/blkio.throttle.read_iops_device"
    echo "$disk $2" >"$CGROUP/blkio.throttle.write_iops_device"
  }
else
  echo "calibration: no cgroup v2 io controller and no v1 blkio hierarchy under /sys/fs/cgroup: cannot throttle" >&2
  exit 2
fi
echo "calibration: $ROUNDS rounds of ${WORKLOADS// /, } on $DIR (disk $disk), $CPUS CPUs (cpu runs on $HALF)" >&2

if [ "$SMOKE" = 1 ]; then
  CUBE=(--scale 0.002 --repeat 3)
  DISK=(--size 16m --runs 3 --duration 100ms --no-warmup --interval 0s)
  RANREAD=(--size 16m --jobs 1,2 --duration 500ms)
  TPCH=(--sf 0.01 --users 1 --sets 1)
else
  CUBE=(--scale "${CUBE_SCALE:-0.02}" --repeat 5)
  DISK=(--quick)
  RANREAD=(--size 256m --jobs 1,2,4 --duration 2s)
  TPCH=(--sf "${TPCH_SF:-0.1}" --users 2 --sets 2)
fi

# run LABEL WRAPPER...: every workload once under LABEL, its command prefixed by WRAPPER.
run() {
  local label=$1
  shift
  for workload in $WORKLOADS; do
    local args
    case $workload in
      cube) args=(cube --dir "$DIR/cube" "${CUBE[@]}" --calc-threads "$CPUS") ;;
      disk) args=(disk --dir "$DIR/disk" "${DISK[@]}" --test rnd:4k:q1:t1:read --test rnd:4k:q1:t1:write) ;;
      ranread) args=(ranread --dir "$DIR/ranread" "${RANREAD[@]}") ;;
      tpch) args=(tpch --dir "$DIR/tpch" "${TPCH[@]}" --threads "$CPUS") ;;
      *) echo "calibration: unknown workload '$workload' in WORKLOADS (cube, disk, ranread, tpch)" >&2; exit 2 ;;
    esac
    local out="$WORK/$label-$workload$SUFFIX"
    if ! "$@" "$ENVBENCH" "${args[@]}" --label "$label" --json >"$out.json" 2>"$out.err"; then
      echo "calibration: $workload under $label failed:" >&2
      tail -5 "$out.err" >&2
      exit 1
    fi
  done
}

# The IOPS a disk run's JSON reports for its read and its write test.
iops() {
  jq -r --arg op "$2" '[.outcome.tests[] | select(.spec.operation == $op) | .mean_iops] | first // empty' "$1"
}

# Run the command beside a busy loop on every CPU: other work competing for the machine while it measures.
beside_hog() {
  local status=0
  HOGS=()
  for _ in $(seq 1 "$CPUS"); do
    sh -c 'while :; do :; done' &
    HOGS+=($!)
  done
  "$@" || status=$?
  kill "${HOGS[@]}" 2>/dev/null
  wait "${HOGS[@]}" 2>/dev/null || true
  HOGS=()
  return "$status"
}

# Join the cgroup, then run the command.
in_cgroup() {
  sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CGROUP" "$@"
}

for round in $(seq 1 "$ROUNDS"); do
  echo "calibration: round $round of $ROUNDS" >&2
  for SUFFIX in $(seq -f "-%g" 1 "$RUNS"); do
    run "r$round-a" env
    run "r$round-a2" env
    run "r$round-cpu" taskset -c "0-$((HALF - 1))"
  done
  if [ "$STORAGE" = 1 ]; then
    read_iops=$(iops "$WORK/r$round-a-disk$SUFFIX.json" read)
    write_iops=$(iops "$WORK/r$round-a-disk$SUFFIX.json" write)
    throttle "$(awk -v n="$read_iops" 'BEGIN { printf "%.0f", n / 2 }')" \
      "$(awk -v n="$write_iops" 'BEGIN { printf "%.0f", n / 2 }')"
    for SUFFIX in $(seq -f "-%g" 1 "$RUNS"); do
      run "r$round-io" in_cgroup
    done
  fi
  for SUFFIX in $(seq -f "-%g" 1 "$RUNS"); do
    run "r$round-busy" beside_hog
  done
  for pair in $PAIRS; do
    "$ENVBENCH" compare "r$round-a" "r$round-$pair" --json >"$WORK/compare-$round-$pair.json"
  done
done

python3 - "$WORK" "$ROUNDS" "$WORKLOADS" "$PAIRS" "$RUNS" "$SMOKE" <<'PY'
import json, os, sys
work, rounds, workloads, pairs, runs = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5]
smoke = sys.argv[6] == "1"
expected = {"cpu": {"cube", "tpch"}, "io": {"disk", "ranread"}}
kinds = ("a2", "cpu", "io", "busy")
counts = {w: {p: {"faster": 0, "slower": 0, "same": 0, "cannot_tell": 0} for p in kinds} for w in workloads}
ratios = {w: {p: [] for p in kinds} for w in workloads}
disturbed = {w: 0 for w in workloads}
for r in range(1, rounds + 1):
    for pair in pairs:
        comparison = json.load(open(os.path.join(work, f"compare-{r}-{pair}.json")))
        # A side the sampler found disturbed is said once for the pair, in its verdict's disturbance sentences.
        flagged = bool(comparison["verdicts"][0].get("disturbance"))
        for verdict in comparison["verdicts"][0]["workloads"]:
            w = verdict["workload"]
            if w not in counts:
                continue
            if pair == "busy":
                counts[w][pair][verdict["decision"]] += 1
            elif pair == "a2" and flagged and verdict["decision"] in ("faster", "slower"):
                disturbed[w] += 1
            else:
                counts[w][pair][verdict["decision"]] += 1
            ratios[w][pair].append(verdict["ratio"])

def rate(hits, n):
    return f"{hits}/{n} ({100.0 * hits / n:.0f}%)" if n else "-"

print(f"verdict calibration: {rounds} rounds, {rounds} A/A pairs and {rounds} A/B pairs of each kind per workload, "
      f"{runs} run(s) a side")
print(f"{'workload':<10}{'false alarms (A/A)':>22}{'disturbed':>11}{'cannot tell':>13}{'detected, half CPUs':>22}"
      f"{'detected, I/O / 2':>20}{'busy: slower':>15}{'busy: cannot tell':>19}{'busy: wrong':>13}"
      f"{'A/A speed factors':>26}")
wrong_total = 0
for w in workloads:
    c = counts[w]
    alarms = c["a2"]["faster"] + c["a2"]["slower"]
    cannot = sum(c[p]["cannot_tell"] for p in ("a2", "cpu", "io"))
    detected = {p: rate(c[p]["slower"], rounds if p in pairs else 0) + ("" if w in expected[p] or p not in pairs else " *")
                for p in ("cpu", "io")}
    busy = c["busy"]
    wrong = busy["same"] + busy["faster"]
    wrong_total += wrong
    spread = ratios[w]["a2"]
    span = f"{min(spread):.3f}..{max(spread):.3f}" if spread else "-"
    print(f"{w:<10}{rate(alarms, rounds):>22}{disturbed[w]:>11}{cannot:>13}{detected['cpu']:>22}{detected['io']:>20}"
          f"{rate(busy['slower'], rounds):>15}{rate(busy['cannot_tell'], rounds):>19}{wrong:>13}{span:>26}")
print("disturbed: A/A alarms whose verdict names a side the sampler found disturbed, counted apart from false alarms")
print("* not a target: the change does not bind this workload (storage under half the CPUs, CPU work under an I/O "
      "throttle)")
print("busy: beside a CPU hog on every CPU (a disturbed A/B pair): slower or cannot tell is right; wrong counts "
      "'about the same' and 'faster'")
if wrong_total and not smoke:
    print(f"calibration: {wrong_total} disturbed A/B verdict(s) said about the same or faster", file=sys.stderr)
    sys.exit(1)
PY
