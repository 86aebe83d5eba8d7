"""Benchmarks of the Python package (not tests; figures go into docs/performance.md).

1. A loop of 10,000 `sim.step()` calls (plus `outputs()`) from Python against the
   same 10,000 steps in the Rust loop (`Model.run`, whose loop never leaves Rust),
   per step, on examples/forced_oscillator.fd with Newton fixed:2.
2. A sweep of 16 parameter sets on 1 thread and on 2 threads (throughput ratio).

Usage: python python/bench/bench.py   (with the fdc wheel installed, release build)
"""

import pathlib
import time

import fdc

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODEL = str(ROOT / "examples" / "forced_oscillator.fd")
N = 10_000


def best(f, repeat=5):
    return min(f() for _ in range(repeat))


def step_loop(m):
    def once():
        sim = m.simulator(step=1e-3, newton="fixed:2")
        sim.step()
        t0 = time.perf_counter()
        for _ in range(N):
            sim.step()
            sim.outputs()
        return (time.perf_counter() - t0) / N

    return best(once)


def rust_loop(m):
    def once():
        r = m.run(end=N * 1e-3, step=1e-3, output_every=N * 1e-3, newton="fixed:2")
        assert r.steps == N
        return r.wall_time / N

    return best(once)


def sweep_time(jobs):
    sets = {"k": [50.0 + 25.0 * i for i in range(16)]}

    def once():
        t0 = time.perf_counter()
        s = fdc.sweep(MODEL, sets, jobs=jobs, end=20.0, summary=["z"])
        assert len(s) == 16 and not s.failed
        return time.perf_counter() - t0

    return best(once, repeat=3)


def main():
    m = fdc.load(MODEL)
    py, rs = step_loop(m), rust_loop(m)
    print(f"step loop: Python sim.step()+outputs() {py * 1e6:.2f} us/step, "
          f"Rust loop {rs * 1e6:.2f} us/step, ratio {py / rs:.2f}")
    one, two = sweep_time(1), sweep_time(2)
    print(f"sweep of 16 sets (20 s each): 1 thread {one:.2f} s, 2 threads {two:.2f} s, "
          f"throughput ratio {one / two:.2f}")


if __name__ == "__main__":
    main()
