#!/usr/bin/env python3
"""Writes an N-body pendulum chain (revolute joints, one spring-damper per link) as fd.

Usage: gen_chain.py N [--mass M] [--no-springs] [--chains K] > chain_N.fd
(bench/peers/compare.sh uses `--mass 1 --no-springs`: the chain the peers also model.)
--chains K writes K independent copies of the chain, 2 m apart (K·N bodies): a model
that grows without its dynamics changing, unlike one longer chain, whose highest
frequency grows about as √N (bench/scaling.sh `CHAINS_OF`, docs/performance.md).
"""
import sys


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


n = int(sys.argv[1])
mass = option("--mass", "0.2")
chains = int(option("--chains", "1"))
springs = "--no-springs" not in sys.argv
out = [f"// {n} rods of 0.5 m hanging from a pivot"
       + (", each joint with a torsional stiffener." if springs else ".")
       + (f" {chains} such chains side by side." if chains > 1 else ""),
       "param L = 0.5;", f"param m = {mass};", "gravity [0, 0, -9.81];", ""]
for k in range(chains):
    # One chain keeps the names it always had; copies are prefixed with their number.
    pre, y = ("", 0) if chains == 1 else (f"c{k}_", 2 * k)
    for i in range(n):
        out.append(f"body {pre}rod{i}: rigid_body {{ mass = m; inertia = [1e-4, m*L^2/12, m*L^2/12]; "
                   f"position = [L*{i} + L/2, {y}, 0]; }}")
    for i in range(n):
        parent = "ground" if i == 0 else f"{pre}rod{i-1}"
        out.append(f"joint {pre}j{i}: revolute({pre}rod{i}, {parent}) {{ at = [L*{i}, {y}, 0]; "
                   "axis = [0, 1, 0]; }")
    for i in range(1, n if springs else 1):
        out.append(f"force {pre}s{i}: spring_damper({pre}rod{i}, {pre}rod{i-1}) {{ "
                   f"at_a = [L*{i} + L/2, {y}, 0.01]; at_b = [L*{i} - L/2, {y}, 0.01]; "
                   "stiffness = 50; damping = 0.1; }")
out.append("simulate { end = 1; step = 1e-3; output_every = 0.01; }")
print("\n".join(out))
