#!/usr/bin/env python3
"""Tiered compilation and the shared JIT, measured through the real binaries.

Usage: bench/tiers.py FDC BASELINE_FDC [RUNS [CASES]]   (default 5, warm,cold,edit: the
parts to run)

1. Warm builds (`fdc build --timings`, cache filled first) of generated chains of
   10 and 100 bodies: the JIT/link phase and the whole process, FDC and BASELINE_FDC
   alternately, medians.
2. Time to first result of the 10-body chain, cold (fresh cache directory), whole
   process `fdc run chain.fd --end 0.01`: FDC tiered (no --opt-level) and FDC with
   --opt-level 2 (one tier) and BASELINE_FDC tiered, interleaved. "first result" is when the `results:`
   line appears on stderr (the CSV is complete then); "exit" is the process end (a
   tiered run waits for the optimizing build, which fills the cache). Then the same
   after changing one literal in a one-off element of a cached model.
Ratios are of medians measured in the same invocation.
"""
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from first_result import first_result as timed_run  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
fdc, base = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
work = tempfile.mkdtemp(prefix="fdc-tiers-")


def chain(n, drag=None):
    text = subprocess.run([sys.executable, os.path.join(here, "gen_chain.py"), str(n)],
                          check=True, capture_output=True, text=True).stdout.splitlines()
    if drag is not None:
        text.insert(-1, f"force drag: on(rod0) {{ apply torque -{drag} * rod0.omega on rod0; }}")
    path = os.path.join(work, f"chain_{n}.fd")
    with open(path, "w") as f:
        f.write("\n".join(text) + "\n")
    return path


def build_timings(binary, model, cache):
    t0 = time.perf_counter()
    out = subprocess.run([binary, "build", model, "--timings", "--cache-dir", cache],
                         check=True, capture_output=True, text=True).stdout
    wall = (time.perf_counter() - t0) * 1e3
    link = float(re.search(r"jit/link\s+([0-9.]+)", out).group(1))
    backend = float(re.search(r"total backend\s+([0-9.]+)", out).group(1))
    return link, wall, backend


def first_result(args, cache):
    """Milliseconds to the `results:` line and to the process exit."""
    return timed_run(args + ["--cache-dir", cache], os.path.join(work, "out.csv"))


med = statistics.median
cases = sys.argv[4].split(",") if len(sys.argv) > 4 else ("warm", "cold", "edit")
print(f"# warm builds, {runs} runs each, medians [ms]")
print(f"{'N':>5} {'jit/link new':>13} {'base':>6} {'ratio':>6} {'backend new':>12} {'base':>6} {'ratio':>6} {'wall new':>9} {'base':>6} {'ratio':>6}")
for n in (10, 100) if "warm" in cases else ():
    m = chain(n)
    res = {"new": [], "base": []}
    for who, b in (("new", fdc), ("base", base)):
        build_timings(b, m, os.path.join(work, f"warm-{who}-{n}"))  # fill the cache
    for _ in range(runs):
        for who, b in (("new", fdc), ("base", base)):
            res[who].append(build_timings(b, m, os.path.join(work, f"warm-{who}-{n}")))
    ln, lb = med(r[0] for r in res["new"]), med(r[0] for r in res["base"])
    wn, wb = med(r[1] for r in res["new"]), med(r[1] for r in res["base"])
    bn, bb = med(r[2] for r in res["new"]), med(r[2] for r in res["base"])
    print(f"{n:>5} {ln:>13.1f} {lb:>6.1f} {ln / lb:>6.2f} {bn:>12.1f} {bb:>6.1f} {bn / bb:>6.2f} {wn:>9.0f} {wb:>6.0f} {wn / wb:>6.2f}")

print(f"\n# 10-body chain, `fdc run --end 0.01`, {runs} runs each, medians [ms]")
print(f"{'case':<8} {'tier':<8} {'first result':>13} {'exit':>8}")
m = chain(10, drag=0.5)
tiers = ("tiered", "one", "base")  # base: BASELINE_FDC tiered
for case in (c for c in cases if c in ("cold", "edit")):
    res = {who: [] for who in tiers}
    for r in range(runs):
        for who in tiers:
            cache = os.path.join(work, f"ttfr-{case}-{who}-{r}")
            args = [base if who == "base" else fdc, "run", m, "--end", "0.01"]
            args += ["--opt-level", "2"] if who == "one" else []
            if case == "edit":
                chain(10, drag=0.5)
                subprocess.run(args + ["--cache-dir", cache, "-o", os.path.join(work, "o.csv")],
                               check=True, capture_output=True)
                chain(10, drag=f"0.5{r + 1}")
            else:
                chain(10, drag=0.5)
            res[who].append(first_result(args, cache))
    for who in tiers:
        print(f"{case:<8} {who:<8} {med(x[0] for x in res[who]):>13.0f} {med(x[1] for x in res[who]):>8.0f}")
    t, o = med(x[0] for x in res["tiered"]), med(x[0] for x in res["one"])
    print(f"{case:<8} ratio tiered/one first result {t / o:.2f}")
    e = {who: med(x[1] for x in res[who]) for who in tiers}
    print(f"{case:<8} exit ratios: tiered/one {e['tiered'] / e['one']:.2f}, "
          f"tiered/base tiered {e['tiered'] / e['base']:.2f}")
subprocess.run(["rm", "-rf", work])
