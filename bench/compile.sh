#!/usr/bin/env bash
# Compile-time benchmark of whole models through the real binary: cold (empty cache)
# and warm (cache hit), for the pendulum example and generated 20- and 100-body chains.
# Prints each phase from `fdc build --timings`, and the warm/cold ratio.
# Usage: bench/compile.sh [path/to/fdc]   (default: target/release/fdc)
set -euo pipefail
cd "$(dirname "$0")/.."
FDC=${1:-target/release/fdc}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 bench/gen_chain.py 20 > "$work/chain_20.fd"
python3 bench/gen_chain.py 100 > "$work/chain_100.fd"
total() { awk '/^total backend/ {b=$3} /^parse\+check|^lower\+diff|^simplify/ {f+=$2} END {printf "%.1f", b+f}'; }
printf '%-14s %12s %12s %8s\n' model "cold [ms]" "warm [ms]" "warm/cold"
for m in examples/pendulum.fd "$work/chain_20.fd" "$work/chain_100.fd"; do
    cache="$work/cache-$(basename "$m")"
    cold=$("$FDC" build "$m" --timings --cache-dir "$cache" | total)
    warm=$("$FDC" build "$m" --timings --cache-dir "$cache" | total)
    printf '%-14s %12s %12s %8.3f\n' "$(basename "$m" .fd)" "$cold" "$warm" "$(echo "$warm / $cold" | bc -l)"
done
