#!/usr/bin/env bash
# fdc against Exudyn and MuJoCo on the same revolute chain (1 kg, 0.5 m links, h = 1 ms,
# 0.5 s simulated; Exudyn with fdc's numerical damping, see the peer scripts), runs
# interleaved (fdc, Exudyn, MuJoCo, then again) REPS times per N; prints the median µs
# per step of each and the ratios. fdc converged (velocity 1e-10), sparse LU, from
# `fdc --timing` (median of the per-step wall times, which a loaded machine seldom
# preempts); the peers report CPU time per step, and so does the `fdc CPU` column
# (bench/peers/fdc_cpu.py: CPU time of a 1.1 s run minus a 0.1 s run, per step), which
# the ratios use: on a loaded machine the wall median counts the other processes.
# Neither peer script keeps results (Exudyn's solution file is off, MuJoCo's loop
# stores nothing), so both fdc figures are of runs that write no result rows either
# (`--output-every 1000`: only the rows at the start and the end; fdc's default of a row every 10 ms
# costs the 64-link chain ≈ 6 % of its step time, formatting 2,634 columns).
# The peers are installed into a bench venv under target/ (not part of CI):
#   python3 -m venv target/bench-venv && target/bench-venv/bin/pip install exudyn mujoco numpy
# Usage: bench/peers/compare.sh [path/to/fdc] [N ...]   (default: target/release/fdc, 1 4 16 64)
set -euo pipefail
cd "$(dirname "$0")/../.."
FDC=${1:-target/release/fdc}
shift || true
SIZES=${*:-1 4 16 64}
PY=${PY:-target/bench-venv/bin/python}
REPS=${REPS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '| N | fdc wall median µs/step | fdc CPU µs/step | Exudyn µs/step | MuJoCo RK4 µs/step | Exudyn ÷ fdc CPU | fdc CPU ÷ MuJoCo |\n'
printf '|---|---|---|---|---|---|---|\n'
for n in $SIZES; do
  python3 bench/gen_chain.py "$n" --mass 1 --no-springs > "$work/c.fd"
  # Warm the fdc cache: the step time must not include a compile.
  "$FDC" "$work/c.fd" --end 0.01 --cache-dir "$work/cache" -o "$work/c.csv" >/dev/null 2>&1
  : > "$work/f"; : > "$work/c"; : > "$work/e"; : > "$work/m"
  for _ in $(seq "$REPS"); do
    "$FDC" "$work/c.fd" --end 0.5 --timing --output-every 1000 --cache-dir "$work/cache" -o "$work/c.csv" 2>&1 \
      | sed -n 's/.*median \([0-9.]*\).*/\1/p' >> "$work/f"
    FDC_ARGS="--output-every 1000" python3 bench/peers/fdc_cpu.py "$FDC" "$work/c.fd" "$work/cache" "$work/c.csv" >> "$work/c"
    "$PY" bench/peers/exudyn_chain.py "$n" | awk '{print $4}' >> "$work/e"
    "$PY" bench/peers/mujoco_chain.py "$n" | awk '{print $4}' >> "$work/m"
  done
  f=$(median < "$work/f"); c=$(median < "$work/c"); e=$(median < "$work/e"); m=$(median < "$work/m")
  printf '| %s | %s | %s | %s | %s | %.2f | %.2f |\n' "$n" "$f" "$c" "$e" "$m" \
    "$(echo "$e / $c" | bc -l)" "$(echo "$c / $m" | bc -l)"
done
