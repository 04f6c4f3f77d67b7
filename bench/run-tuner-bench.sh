#!/usr/bin/env bash
# Tuner check: allReduce forced ring, forced tree, forced rd, forced rh and auto, at 2, 4 and 8 ranks, in one run;
# prints, per size, each time and auto's ratio to the better forced choice. Also the cost of the
# mismatch check at 8 B (SPARKCCL_CHECKCALLS=false turns it off).
#   RANKS_LIST ["2 4 8"]  MAXBYTES [64M; 16M at 8 ranks]
# Small sizes (8 B..64 KiB) run 1000 timed iterations, large ones 10: the machine is noisy.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT=bench/build/tuner
mkdir -p "$OUT"
for n in ${RANKS_LIST:-2 4 8}; do
  max="${MAXBYTES:-64M}"
  [[ $n -ge 8 && -z ${MAXBYTES:-} ]] && max=16M
  # -a compare measures ring, tree, rd, rh and auto in the same processes, interleaved in 7 rounds
  # (median kept): separate runs drift by up to 3x at small sizes on this machine.
  echo "==> $n ranks, -a compare" >&2
  bin/sparkccl-perf -n "$n" -b 8 -e 64K -f 4 -o allreduce -a compare -c 0 -w 100 -i 1400 \
    --json "$OUT/n${n}_small.json" >/dev/null
  bin/sparkccl-perf -n "$n" -b 256K -e "$max" -f 4 -o allreduce -a compare -c 0 -w 2 -i 14 \
    --json "$OUT/n${n}_large.json" >/dev/null
done
for check in on off; do
  flag=true
  [[ $check == off ]] && flag=false
  for a in ring tree; do
    echo "==> mismatch check $check, 4 ranks, 8 B, -a $a" >&2
    SPARKCCL_CHECKCALLS="$flag" bin/sparkccl-perf -n 4 -b 8 -e 8 -a "$a" -c 0 -w 500 -i 2000 \
      --json "$OUT/check_${check}_$a.json" >/dev/null
  done
done
python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
def rows(name, algo=None):
    found = {}
    for part in ("", "_small", "_large"):
        p = os.path.join(out, name.replace(".json", part + ".json"))
        if os.path.exists(p):
            found.update({r["size"]: r["time_us"] for r in json.load(open(p))["rows"]
                          if algo is None or r.get("algo") == algo})
    return found
print("| ranks | size | ring us | tree us | rd us | rh us | auto us | auto / best forced |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
worst = {}
for n in (2, 4, 8):
    ring, tree, rd, rh, auto = (rows(f"n{n}.json", a) for a in ("ring", "tree", "rd", "rh", "auto"))
    for size in sorted(auto):
        best = min(d.get(size, float("inf")) for d in (ring, tree, rd, rh))
        ratio = auto[size] / best
        worst[n] = max(worst.get(n, 0), ratio)
        print(f"| {n} | {size} | {ring.get(size, float('nan')):.1f} | {tree.get(size, float('nan')):.1f} | {rd.get(size, float('nan')):.1f} | {rh.get(size, float('nan')):.1f} | {auto[size]:.1f} | {ratio:.2f} |")
print()
for n, w in worst.items():
    print(f"- {n} ranks: worst auto / best forced = {w:.2f}")
for a in ("ring", "tree"):
    on, off = rows(f"check_on_{a}.json"), rows(f"check_off_{a}.json")
    if on and off:
        print(f"- mismatch check at 8 B, 4 ranks, {a}: {on[8]:.1f} us with, {off[8]:.1f} us without ({on[8]/off[8]:.2f}x)")
PY
