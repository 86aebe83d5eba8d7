#!/usr/bin/env bash
# "Behaviour unchanged" between two fdc binaries (issue 20's acceptance): the IR of
# every example, simplified and not (`fdc ir`, `fdc ir --no-simplify`), and the
# diagnostics of every language case and stdlib file (`fdc check`, stdout, stderr and
# exit status), compared byte for byte.
#
# Usage: bench/behaviour.sh NEW BASE [KEEP_DIR]
#
# Both binaries read this tree's examples and cases (each has its own stdlib built
# in). Prints one line per input that differs and a summary; exits 1 if any differ.
# With KEEP_DIR the outputs are left there (new/..., base/...) to inspect the diffs.
#
# An older binary: `git archive REV | tar -x -C DIR`, then `cargo build --workspace
# --bin fdc` there and copy `target/debug/fdc` away. Sharing this tree's target dir
# saves rebuilding the dependencies, but cargo then takes the other tree's artifacts of
# the workspace crates for fresh (its fingerprints compare file times): touch the files
# that differ (`git diff --name-only REV`) before building here again.
set -uo pipefail
cd "$(dirname "$0")/.."
NEW=$1
BASE=$2
work=${3:-$(mktemp -d)}
[ -n "${3:-}" ] || trap 'rm -rf "$work"' EXIT
mkdir -p "$work/new" "$work/base"

# One run: the command's stdout, then its stderr, then its exit status.
run() { # OUT BIN ARGS...
    local out=$1 bin=$2
    shift 2
    "$bin" "$@" > "$out" 2> "$out.err"
    echo "exit $?" >> "$out.err"
    cat "$out.err" >> "$out" && rm "$out.err"
}

same=0
differ=0
compare() { # NAME ARGS...
    local name=$1
    shift
    run "$work/new/$name" "$NEW" "$@"
    run "$work/base/$name" "$BASE" "$@"
    if cmp -s "$work/new/$name" "$work/base/$name"; then
        same=$((same + 1))
    else
        differ=$((differ + 1))
        echo "differs: $name ($(diff "$work/base/$name" "$work/new/$name" | grep -c '^[<>]') lines)"
    fi
}

for f in examples/*.fd; do
    n=$(basename "$f" .fd)
    compare "ir.$n" ir "$f"
    compare "ir-raw.$n" ir --no-simplify "$f"
done
for f in lang-tests/cases/*.fd stdlib/*.fd; do
    compare "check.$(echo "$f" | tr / _)" check "$f"
done
echo "identical: $same, different: $differ"
[ "$differ" -eq 0 ]
