"""Time to the first result of an `fdc run`: the one measurement of bench/tiers.py and
bench/one_type.py."""
import subprocess
import time


def first_result(args, out_csv):
    """Milliseconds from the process start to the `results:` line on stderr (the CSV
    is complete then) and to the process exit; `args` is the whole command line
    without `-o`."""
    t0 = time.perf_counter()
    p = subprocess.Popen(args + ["-o", out_csv],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    first = None
    for line in p.stderr:
        if line.startswith("results:") and first is None:
            first = (time.perf_counter() - t0) * 1e3
    p.wait()
    assert p.returncode == 0
    return first, (time.perf_counter() - t0) * 1e3
