#!/usr/bin/env bash
# Per-body cost of the revolute chain the peers run (`bench/gen_chain.py N --mass 1
# --no-springs`: 1 kg, 0.5 m links, h = 1 ms, converged Newton by default) for
# N = 16, 64, 256, 1000 (or the sizes in SIZES): the median per-step wall time of
# `fdc --timing` (0.5 s simulated) and the CPU time per step of bench/peers/fdc_cpu.py
# (CPU of a 1.1 s run minus a 0.1 s run: everything a step costs, output rows
# included), each divided by N, and the CPU per body relative to the first size
# (a flat per-body cost keeps it at 1).
# REPS rounds (default 3), the medians of the rounds in the table. With BASE the two
# binaries run interleaved (new, base, new, ...) and the table gives both and the ratio
# new / base of the CPU figures.
# ARGS adds options to every run, e.g. ARGS="--newton fixed:2" for the same Newton work
# in every step at every size (the converged default needs more new matrices per step
# on the long chains: docs/performance.md, session 27), ARGS="--output-every 1000" for
# no result rows. BASE_ARGS adds options to BASE's runs only, so that one binary can be
# its own baseline: BASE_ARGS="--matrix-steps 1" bench/scaling.sh FDC FDC compares the
# default (matrices kept across steps where the counted costs say so) with a new matrix
# every step (the same Newton work at every size: two corrections and one matrix).
# CHAINS_OF=16 makes each size N of N/16 independent 16-rod chains (`gen_chain.py
# --chains`; N a multiple of 16): the model grows, its dynamics and so its Newton work
# per step do not (one longer chain's highest frequency grows about as √N).
# Usage: bench/scaling.sh [NEW] [BASE]   (default NEW: target/release/fdc)
#        SIZES="16 64" REPS=5 bench/scaling.sh NEW BASE
#        ARGS="--newton fixed:2" bench/scaling.sh NEW
#        CHAINS_OF=16 SIZES="16 64 256 1008" bench/scaling.sh NEW
#        ARGS="--output-every 1000" BASE_ARGS="--matrix-steps 1" bench/scaling.sh NEW NEW
set -euo pipefail
cd "$(dirname "$0")/.."
NEW=${1:-target/release/fdc}
BASE=${2:-}
SIZES=${SIZES:-16 64 256 1000}
REPS=${REPS:-3}
# The options of each binary's runs: ARGS, and BASE_ARGS for BASE.
opts=("${ARGS:-}" "${ARGS:-} ${BASE_ARGS:-}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() { # FDC CACHE MODEL OPTIONS: the median step time [us] of one run
  local extra
  read -r -a extra <<< "$4"
  "$1" "$3" --end 0.5 --timing --cache-dir "$2" -o "$work/c.csv" "${extra[@]}" 2>&1 \
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
# Every round measures every size with every binary (sizes interleaved, so a slow spell
# of the shared machine lands on all of them). A sample of a size below 1,000 bodies is
# the median of ceil(1000 / N) runs (at most 9): one run of the 16-rod chain is ≈ 20 ms
# of CPU, and single runs of it scattered by ± 25 %.
for n in $SIZES; do
  if [ -n "${CHAINS_OF:-}" ]; then
    python3 bench/gen_chain.py "$CHAINS_OF" --mass 1 --no-springs --chains $((n / CHAINS_OF)) > "$work/c$n.fd"
  else
    python3 bench/gen_chain.py "$n" --mass 1 --no-springs > "$work/c$n.fd"
  fi
  for i in "${!bins[@]}"; do
    # Warm each binary's own cache: no step may include a compile.
    "${bins[$i]}" "$work/c$n.fd" --end 0.01 --cache-dir "$work/cache$i" -o "$work/c.csv" >/dev/null 2>&1
    : > "$work/wall$i.$n"; : > "$work/cpu$i.$n"
  done
done
for _ in $(seq "$REPS"); do
  for n in $SIZES; do
    runs=$(( (1000 + n - 1) / n )); [ "$runs" -gt 9 ] && runs=9
    for i in "${!bins[@]}"; do
      wall "${bins[$i]}" "$work/cache$i" "$work/c$n.fd" "${opts[$i]}" >> "$work/wall$i.$n"
      for _ in $(seq "$runs"); do
        FDC_ARGS="${opts[$i]}" python3 bench/peers/fdc_cpu.py "${bins[$i]}" "$work/c$n.fd" "$work/cache$i" "$work/c.csv"
      done | median >> "$work/cpu$i.$n"
    done
  done
done
first=()
for n in $SIZES; do
  row="| $n"
  for i in "${!bins[@]}"; do
    w=$(median < "$work/wall$i.$n"); c=$(median < "$work/cpu$i.$n")
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
