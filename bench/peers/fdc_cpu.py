"""CPU time per step of an fdc run, comparable to the peers' `time.process_time()`.

The peers time only their step loop in CPU time, so on a loaded machine their figure
does not include the other processes. fdc's `--timing` median is wall time per step.
This script runs the same model to two end times (0.1 s and 1.1 s) and divides the difference of the
child's CPU time (user + system) by the difference in steps, which removes start-up,
compilation (warm cache) and initialization. Prints µs per step.
Usage: python3 fdc_cpu.py FDC MODEL CACHE_DIR OUT_CSV [h=1e-3]
Options for both runs may be added in the environment variable FDC_ARGS (split at
spaces), e.g. FDC_ARGS="--output-every 1000" for a run that writes no result rows.
"""
import os
import resource
import subprocess
import sys


def cpu_of(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    fdc, model, cache, out = sys.argv[1:5]
    h = float(sys.argv[5]) if len(sys.argv) > 5 else 1e-3
    short, long = 0.1, 1.1
    extra = os.environ.get("FDC_ARGS", "").split()
    base = [fdc, model, "--cache-dir", cache, "-o", out, *extra, "--end"]
    t_short = cpu_of(base + [str(short)])
    t_long = cpu_of(base + [str(long)])
    steps = round((long - short) / h)
    print(f"{(t_long - t_short) / steps * 1e6:.1f}")


main()
