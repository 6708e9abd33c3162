#!/usr/bin/env bash
# The cube benchmark: the full 8-step sequence at scale 0.1 and 1.0 on this machine, per step wall time, cells/s and
# the disk MB/s the OS sampler saw; and, in the same run, envbench disk's SEQ1M Q8T1 read and write on the same file
# system, so the dense restructure's data rate can be set against half the sequential rate.
#
# Targets (2-core machine): scale 1.0 sequence under 10 minutes; CSV load of ~10M rows under 33 s; dense restructure
# moving block data (read + written) at no less than half of SEQ1M Q8T1.
#
# Usage: bench/cube.sh [DIR]   Environment: SCALES ("0.1 1.0"), REPEAT (1), EXTRA (extra cube options, e.g. --direct).
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=${1:-/var/tmp/envbench-cube-bench}
SCALES=${SCALES:-0.1 1.0}
REPEAT=${REPEAT:-1}
EXTRA=${EXTRA:-}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/envbench-target}
export ENVBENCH_STORE=${ENVBENCH_STORE:-$DIR/results.db}
mkdir -p "$DIR"
cargo build --quiet --release -p envbench
ENVBENCH="$CARGO_TARGET_DIR/release/envbench"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "cube: envbench disk SEQ1M Q8T1 on $DIR" >&2
"$ENVBENCH" disk --dir "$DIR" --test seq:1m:q8:t1:read --test seq:1m:q8:t1:write --size 2g --runs 2 --duration 5s \
  --interval 1s --json >"$WORK/disk.json" 2>/dev/null

for scale in $SCALES; do
  echo "cube: scale $scale" >&2
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$ENVBENCH" cube --dir "$DIR/cube-$scale" --scale "$scale" --repeat "$REPEAT" $EXTRA --json >"$WORK/cube-$scale.json" 2>/dev/null
  end=$(date +%s.%N)
  echo "$start $end" >"$WORK/cube-$scale.time"
done

python3 - "$WORK" $SCALES <<'PY'
import json, sys, os
work, scales = sys.argv[1], sys.argv[2:]
disk = json.load(open(os.path.join(work, "disk.json")))["outcome"]["tests"]
seq = {t["spec"]["operation"] if isinstance(t["spec"]["operation"], str) else "mixed": t["mean_mb_per_s"] for t in disk}
seq_read, seq_write = seq.get("read", 0.0), seq.get("write", 0.0)
print(f"envbench disk SEQ1M Q8T1: read {seq_read:.0f} MB/s, write {seq_write:.0f} MB/s")
for scale in scales:
    document = json.load(open(os.path.join(work, f"cube-{scale}.json")))
    outcome = document["cube"]["outcomes"][0]
    steps = document["sampler"]["steps"]
    start, end = map(float, open(os.path.join(work, f"cube-{scale}.time")).read().split())
    data = outcome["data"]
    print(f"\nscale {scale}: whole command {end - start:.1f} s (including data generation when not cached)")
    print(f"{'step':<24}{'mean s':>9}{'cells/s':>13}{'cube rMB/s':>12}{'cube wMB/s':>12}{'disk rMB/s':>12}{'disk wMB/s':>12}")
    for row in outcome["summary"]:
        name = row["name"]
        seen = [s for s in steps if s["step"].endswith(" " + name)]
        disk_r = sum(s["disks"][0]["read_mb_per_s"] for s in seen if s["disks"]) / max(len(seen), 1)
        disk_w = sum(s["disks"][0]["write_mb_per_s"] for s in seen if s["disks"]) / max(len(seen), 1)
        print(f"{name:<24}{row['mean_seconds']:>9.2f}{row['cells_per_second']:>13.0f}{row['read_mb_per_s']:>12.0f}"
              f"{row['write_mb_per_s']:>12.0f}{disk_r:>12.0f}{disk_w:>12.0f}")
    restructure = next(r for r in outcome["summary"] if r["name"] == "8 dense restructure")
    moved = restructure["read_mb_per_s"] + restructure["write_mb_per_s"]
    half = 0.5 * min(seq_read, seq_write)
    csv = next(r for r in outcome["summary"] if r["name"] == "3 csv load")
    print(f"total {outcome['summary'][-1]['mean_seconds']:.1f} s per sequence (target < 600 s at scale 1.0)")
    print(f"csv load {csv['mean_seconds']:.1f} s (target < 33 s at scale 1.0)")
    print(f"dense restructure moves {moved:.0f} MB/s of block data = {moved / max(half, 1e-9):.2f} x half of SEQ1M Q8T1 "
          f"({half:.0f} MB/s; target >= 1.0)")
PY
