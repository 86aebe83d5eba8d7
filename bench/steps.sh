#!/usr/bin/env bash
# Time per step of N-body revolute chains (compiled by fdc) for N = 1, 4, 16, 64, 256:
# converged Newton (velocity, tol 1e-10) and fixed(2), sparse and dense LU.
# Prints the runtime's median and p99 step time, Newton iterations and factorizations of
# the iteration matrix per step, and the ratio of each N to N = 1 (a linear-cost solver
# grows ~N).
# Usage: bench/steps.sh [path/to/fdc]   (default: target/release/fdc)
#
# With two binaries, `bench/steps.sh NEW BASE [RUNS]`: the chains of N = 16 and 64 with
# the default settings (`fdc c.fd --end 0.5 --timing`), the binaries interleaved (new,
# base, new, ...) RUNS times (default 3), the medians of the runtime's median step
# time and the ratio new / base (each run on a warm cache, so the build is not timed).
set -euo pipefail
cd "$(dirname "$0")/.."
FDC=${1:-target/release/fdc}
BASE=${2:-}
RUNS=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$BASE" ]; then
  median() { sort -n | awk '{a[NR]=$1} END {printf "%.2f", (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
  step() { # FDC CACHE: the median step time [us] of one run
    "$1" "$work/c.fd" --end 0.5 --timing --cache-dir "$2" -o "$work/c.csv" 2>&1 \
      | sed -n 's/.*median \([0-9.]*\).*/\1/p'
  }
  printf '%-5s %14s %14s %8s\n' N "new [us]" "base [us]" ratio
  for n in 16 64; do
    python3 bench/gen_chain.py "$n" > "$work/c.fd"
    : > "$work/new"; : > "$work/base"
    step "$FDC" "$work/cache-new" > /dev/null; step "$BASE" "$work/cache-base" > /dev/null
    for _ in $(seq 1 "$RUNS"); do
      step "$FDC" "$work/cache-new" >> "$work/new"
      step "$BASE" "$work/cache-base" >> "$work/base"
    done
    a=$(median < "$work/new"); b=$(median < "$work/base")
    printf '%-5s %14s %14s %8.3f\n' "$n" "$a" "$b" "$(echo "$a / $b" | bc -l)"
  done
  exit 0
fi
printf '%-5s %-7s %-9s %12s %10s %8s %8s %8s\n' N linear newton "median[us]" "p99[us]" "it/step" \
  "LU/step" "xN=1"
for linear in sparse dense; do
  for newton in velocity:1e-10 fixed:2; do
    base=""
    for n in 1 4 16 64 256; do
      [ "$linear" = dense ] && [ "$n" -gt 64 ] && continue
      python3 bench/gen_chain.py "$n" > "$work/c.fd"
      line=$("$FDC" "$work/c.fd" --end 0.5 --timing --linear "$linear" --newton "$newton" \
             --cache-dir "$work/cache" -o "$work/c.csv" 2>&1)
      med=$(echo "$line" | sed -n 's/.*median \([0-9.]*\).*/\1/p')
      p99=$(echo "$line" | sed -n 's/.*p99 \([0-9.]*\),.*/\1/p')
      it=$(echo "$line" | sed -n 's/.*Newton \([0-9.]*\) iterations.*/\1/p')
      lu=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) factorizations).*/\1/p')
      [ -z "$base" ] && base=$med
      printf '%-5s %-7s %-9s %12s %10s %8s %8s %8.1f\n' "$n" "$linear" "$newton" "$med" "$p99" "$it" "$lu" \
        "$(echo "$med / $base" | bc -l)"
    done
  done
done
