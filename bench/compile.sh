#!/usr/bin/env bash
# Compile-time benchmark of whole models through the real binary.
#
# Usage: bench/compile.sh [FDC [BASELINE_FDC [RUNS]]]   (default FDC: target/release/fdc)
#
# With one binary: cold (empty cache) and warm (cache hit) builds of the pendulum
# example and generated 20- and 100-body chains, the sum of the phases from
# `fdc build --timings`, and the warm/cold ratio.
#
# With two binaries: the same scenarios for both, interleaved (new, baseline, new, ...)
# RUNS times (default 5), whole-process wall time of `fdc build` (start-up, parse,
# lower, cache, JIT, exit), medians and the ratio new ÷ baseline. Scenarios: cold
# (fresh cache directory), warm (second build), and `edit` (one literal changed in a
# one-off element of an otherwise cached model: only that element's code is new) on
# generated chains of 10, 100 and 1000 bodies (`SIZES="10 100"` for others).
set -euo pipefail
cd "$(dirname "$0")/.."
FDC=${1:-target/release/fdc}
BASE=${2:-}
RUNS=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ -z "$BASE" ]; then
    python3 bench/gen_chain.py 20 > "$work/chain_20.fd"
    python3 bench/gen_chain.py 100 > "$work/chain_100.fd"
    total() { awk '/^total backend/ {b=$3} /^parse\+check|^lower\+diff/ {f+=$2} END {printf "%.1f", b+f}'; }
    printf '%-14s %12s %12s %8s\n' model "cold [ms]" "warm [ms]" "warm/cold"
    for m in examples/pendulum.fd "$work/chain_20.fd" "$work/chain_100.fd"; do
        cache="$work/cache-$(basename "$m")"
        cold=$("$FDC" build "$m" --timings --cache-dir "$cache" | total)
        warm=$("$FDC" build "$m" --timings --cache-dir "$cache" | total)
        printf '%-14s %12s %12s %8.3f\n' "$(basename "$m" .fd)" "$cold" "$warm" "$(echo "$warm / $cold" | bc -l)"
    done
    exit 0
fi

# A chain of N bodies plus a one-off drag torque whose coefficient is compiled in.
model() { # N COEFF
    python3 bench/gen_chain.py "$1" | sed '$d'
    echo "force drag: on(rod0) { apply torque -$2 * rod0.omega on rod0; }"
    python3 bench/gen_chain.py "$1" | tail -n 1
}
# Wall milliseconds of one `fdc build`.
wall() { # FDC MODEL CACHE
    local t0 t1
    t0=$(date +%s%N)
    "$1" build "$2" --cache-dir "$3" > /dev/null
    t1=$(date +%s%N)
    echo $(( (t1 - t0) / 1000 ))
}
median() { sort -n | awk '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%.1f", m/1000}'; }
printf '%-6s %-6s %12s %12s %8s\n' N case "new [ms]" "base [ms]" ratio
for n in ${SIZES:-10 100 1000}; do
    for who in new base; do : > "$work/$who.cold"; : > "$work/$who.warm"; : > "$work/$who.edit"; done
    for r in $(seq 1 "$RUNS"); do
        for who in new base; do
            bin=$FDC; [ "$who" = base ] && bin=$BASE
            cache="$work/cache-$who-$n-$r"
            model "$n" 0.5 > "$work/m.fd"
            wall "$bin" "$work/m.fd" "$cache" >> "$work/$who.cold"
            wall "$bin" "$work/m.fd" "$cache" >> "$work/$who.warm"
            model "$n" "0.5$r" > "$work/m.fd"
            wall "$bin" "$work/m.fd" "$cache" >> "$work/$who.edit"
            rm -rf "$cache"
        done
    done
    for c in cold warm edit; do
        a=$(median < "$work/new.$c"); b=$(median < "$work/base.$c")
        printf '%-6s %-6s %12s %12s %8.3f\n' "$n" "$c" "$a" "$b" "$(echo "$a / $b" | bc -l)"
    done
done
