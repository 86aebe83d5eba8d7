#!/usr/bin/env python3
"""One spring-damper type to first result, cold (issue 21's target: <= 40 ms).

Usage: bench/one_type.py FDC BASELINE_FDC [RUNS]   (default 5)

The model: two free bodies and one `spring_damper` between them (element types:
rigid_body, spring_damper). For FDC and BASELINE_FDC alternately, each on a fresh
cache directory:
1. `fdc build --timings --opt-level 0` (the quick tier's code): the phases
   parse+check, lower+diff, simplify, emit, jit/link (level-0 machine code + link)
   and the process wall time;
2. `fdc run --end 0.01` tiered: time to the `results:` line and to the exit.
Medians [ms]; ratios are FDC / BASELINE_FDC of medians from this one invocation.
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

MODEL = """gravity [0, 0, -9.81];
body a: rigid_body { mass = 2; inertia = [0.1, 0.2, 0.3]; position = [0.3, 0.1, -0.2]; }
body b: rigid_body { mass = 1; inertia = [0.05, 0.04, 0.03]; position = [1.0, -0.2, 0.4]; }
force sd: spring_damper(a, b) { at_a = [0.4, 0.1, 0]; at_b = [0.9, 0, 0.3]; stiffness = 40; damping = 3; preload = 2; }
simulate { end = 1; step = 1e-3; output_every = 0.01; }
"""
PHASES = ("parse+check", "lower+diff", "simplify", "llvm emit", "jit/link", "total backend")

fdc, base = sys.argv[1], sys.argv[2]
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
work = tempfile.mkdtemp(prefix="fdc-one-type-")
model = os.path.join(work, "sd.fd")
with open(model, "w") as f:
    f.write(MODEL)


def build(binary, k):
    cache = os.path.join(work, f"b-{os.path.basename(binary)}-{id(binary)}-{k}")
    t0 = time.perf_counter()
    out = subprocess.run([binary, "build", model, "--timings", "--opt-level", "0",
                          "--cache-dir", cache], check=True, capture_output=True, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    text = out.stdout + out.stderr
    row = {p: float(re.search(re.escape(p) + r"\s+([0-9.]+)", text).group(1)) for p in PHASES}
    row["wall"] = wall
    return row


def first_result(binary, k):
    cache = os.path.join(work, f"r-{os.path.basename(binary)}-{id(binary)}-{k}")
    first, end = timed_run([binary, "run", model, "--end", "0.01", "--cache-dir", cache],
                           os.path.join(work, "o.csv"))
    return {"first result": first, "exit": end}


res = {"new": [], "base": []}
for k in range(runs):
    for who, b in (("new", fdc), ("base", base)):
        row = build(b, k)
        row.update(first_result(b, k))
        res[who].append(row)
med = statistics.median
keys = PHASES + ("wall", "first result", "exit")
print(f"# one spring-damper type, cold, {runs} runs each, medians [ms]")
print("| phase | new | base | ratio |")
print("|---|---|---|---|")
for key in keys:
    n, b = med(r[key] for r in res["new"]), med(r[key] for r in res["base"])
    print(f"| {key} | {n:.1f} | {b:.1f} | {n / b if b else float('nan'):.2f} |")
subprocess.run(["rm", "-rf", work])
