#!/usr/bin/env bash
# Per-body cost of the revolute chain the peers run (`bench/gen_chain.py N --mass 1
# --no-springs`: 1 kg, 0.5 m links, h = 1 ms, converged Newton by default) for
# N = 16, 64, 256, 1000 (or the sizes in SIZES): the median per-step wall time of
# `fdc --timing` (0.5 s simulated) and the CPU time per step of bench/peers/fdc_cpu.py
# (CPU of a 1.1 s run minus a 0.1 s run: everything a step costs, output rows
# included), each divided by N, and the CPU per body relative to the first size
# (a flat per-body cost keeps it at 1).
# With BASE the two binaries run interleaved (new, base, new, ...) REPS times per N
# (default 3) and the table gives both and the ratio new / base of the CPU figures.
# ARGS adds options to every run, e.g. ARGS="--newton fixed:2" for the same Newton work
# in every step at every size (the converged default needs more new matrices per step
# on the long chains: docs/performance.md, session 27), ARGS="--output-every 1000" for
# no result rows.
# CHAINS_OF=16 makes each size N of N/16 independent 16-rod chains (`gen_chain.py
# --chains`; N a multiple of 16): the model grows, its dynamics and so its Newton work
# per step do not (one longer chain's highest frequency grows about as √N).
# Usage: bench/scaling.sh [NEW] [BASE]   (default NEW: target/release/fdc)
#        SIZES="16 64" REPS=5 bench/scaling.sh NEW BASE
#        ARGS="--newton fixed:2" bench/scaling.sh NEW
#        CHAINS_OF=16 SIZES="16 64 256 1008" bench/scaling.sh NEW
set -euo pipefail
cd "$(dirname "$0")/.."
NEW=${1:-target/release/fdc}
BASE=${2:-}
SIZES=${SIZES:-16 64 256 1000}
REPS=${REPS:-3}
read -r -a extra <<< "${ARGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { # FDC CACHE: the median step time [us] of one run
  "$1" "$work/c.fd" --end 0.5 --timing --cache-dir "$2" -o "$work/c.csv" "${extra[@]}" 2>&1 \
    | sed -n 's/.*median \([0-9.]*\).*/\1/p'
}
bins=("$NEW")
[ -n "$BASE" ] && bins+=("$BASE")
if [ -n "$BASE" ]; then
  printf '| N | new wall µs/step | new CPU µs/step | new CPU µs/step/body | new ÷ first N | base CPU µs/step | base CPU µs/step/body | base ÷ first N | CPU new ÷ base |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
else
  printf '| N | wall µs/step | CPU µs/step | wall µs/step/body | CPU µs/step/body | CPU per body ÷ first N |\n'
  printf '|---|---|---|---|---|---|\n'
fi
first=()
for n in $SIZES; do
  if [ -n "${CHAINS_OF:-}" ]; then
    python3 bench/gen_chain.py "$CHAINS_OF" --mass 1 --no-springs --chains $((n / CHAINS_OF)) > "$work/c.fd"
  else
    python3 bench/gen_chain.py "$n" --mass 1 --no-springs > "$work/c.fd"
  fi
  for i in "${!bins[@]}"; do
    # Warm each binary's own cache: no step may include a compile.
    "${bins[$i]}" "$work/c.fd" --end 0.01 --cache-dir "$work/cache$i" -o "$work/c.csv" >/dev/null 2>&1
    : > "$work/wall$i"; : > "$work/cpu$i"
  done
  for _ in $(seq "$REPS"); do
    for i in "${!bins[@]}"; do
      wall "${bins[$i]}" "$work/cache$i" >> "$work/wall$i"
      FDC_ARGS="${ARGS:-}" python3 bench/peers/fdc_cpu.py "${bins[$i]}" "$work/c.fd" "$work/cache$i" "$work/c.csv" >> "$work/cpu$i"
    done
  done
  row="| $n"
  for i in "${!bins[@]}"; do
    w=$(median < "$work/wall$i"); c=$(median < "$work/cpu$i")
    per=$(echo "$c / $n" | bc -l)
    [ -z "${first[$i]:-}" ] && first[$i]=$per
    rel=$(echo "$per / ${first[$i]}" | bc -l)
    if [ -n "$BASE" ]; then
      [ "$i" = 0 ] && row="$row | $w"
      row="$row | $c | $(printf '%.3f' "$per") | $(printf '%.2f' "$rel")"
      [ "$i" = 0 ] && c_new=$c
      [ "$i" = 1 ] && row="$row | $(printf '%.3f' "$(echo "$c_new / $c" | bc -l)")"
    else
      row="$row | $w | $c | $(printf '%.3f' "$(echo "$w / $n" | bc -l)") | $(printf '%.3f' "$per") | $(printf '%.2f' "$rel")"
    fi
  done
  echo "$row |"
done
