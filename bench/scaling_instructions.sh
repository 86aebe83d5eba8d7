#!/usr/bin/env bash
# Per-body work of the revolute chain's steps, counted instead of timed: valgrind's
# callgrind over the step loop (`advance_to`) of a run to 0.3 s minus a run to 0.1 s
# (the 200 steps between, without start-up and the first full factorization), with a
# simulated 1 MiB last-level cache (this VM's L2), per body and step: instructions,
# first-level misses and last-level misses, and the instructions relative to the first
# size. Deterministic, so it is not moved by the shared machine's wandering speed
# that makes the timed ratios of bench/scaling.sh scatter by ± 10 % at N = 1,000; the
# cache misses are mostly of streams the hardware fetches ahead, so they cost far less
# time than their count suggests (compare the two benchmarks).
# Sizes and options as in bench/scaling.sh (SIZES, CHAINS_OF, ARGS: e.g. ARGS="--newton
# fixed:2" for the same Newton work in every step); no result rows; level-2 code only.
# Needs valgrind (apt install valgrind). Usage: bench/scaling_instructions.sh [FDC]
#        CHAINS_OF=16 SIZES="16 1008" bench/scaling_instructions.sh
set -euo pipefail
cd "$(dirname "$0")/.."
FDC=${1:-target/release/fdc}
SIZES=${SIZES:-16 64 256 1000}
read -r -a extra <<< "${ARGS:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
count() { # MODEL END: "Ir I1mr+D1mr+D1mw ILmr+DLmr+DLmw" of the step loop
  valgrind --tool=callgrind --cache-sim=yes --D1=32768,8,64 --LL=1048576,16,64 \
    --toggle-collect='*advance_to*' --callgrind-out-file="$work/cg.out" \
    "$FDC" "$1" --end "$2" --output-every 1000 --opt-level 2 --cache-dir "$work/cache" \
    -o "$work/c.csv" "${extra[@]}" >/dev/null 2>&1
  callgrind_annotate --inclusive=no "$work/cg.out" | grep 'PROGRAM TOTALS' | tr -d , \
    | sed 's/([^)]*)//g' | awk '{print $1, $4 + $5 + $6, $7 + $8 + $9}'
}
printf '| N | instructions / body / step | L1 misses | last-level misses | instructions ÷ first N |\n'
printf '|---|---|---|---|---|\n'
first=
for n in $SIZES; do
  if [ -n "${CHAINS_OF:-}" ]; then
    python3 bench/gen_chain.py "$CHAINS_OF" --mass 1 --no-springs --chains $((n / CHAINS_OF)) > "$work/c.fd"
  else
    python3 bench/gen_chain.py "$n" --mass 1 --no-springs > "$work/c.fd"
  fi
  "$FDC" "$work/c.fd" --end 0.01 --opt-level 2 --cache-dir "$work/cache" -o "$work/c.csv" >/dev/null 2>&1
  read -r i0 l0 m0 <<< "$(count "$work/c.fd" 0.1)"
  read -r i1 l1 m1 <<< "$(count "$work/c.fd" 0.3)"
  per() { echo "($2 - $1) / (200 * $n)" | bc -l; }
  ir=$(per "$i0" "$i1")
  [ -z "$first" ] && first=$ir
  printf '| %s | %.0f | %.1f | %.1f | %.3f |\n' "$n" "$ir" "$(per "$l0" "$l1")" "$(per "$m0" "$m1")" \
    "$(echo "$ir / $first" | bc -l)"
done
