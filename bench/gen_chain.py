#!/usr/bin/env python3
"""Writes an N-body pendulum chain (revolute joints, one spring-damper per link) as fd.

Usage: gen_chain.py N [--mass M] [--no-springs] > chain_N.fd
(bench/peers/compare.sh uses `--mass 1 --no-springs`: the chain the peers also model.)
"""
import sys

n = int(sys.argv[1])
mass = sys.argv[sys.argv.index("--mass") + 1] if "--mass" in sys.argv else "0.2"
springs = "--no-springs" not in sys.argv
out = [f"// {n} rods of 0.5 m hanging from a pivot"
       + (", each joint with a torsional stiffener." if springs else "."),
       "param L = 0.5;", f"param m = {mass};", "gravity [0, 0, -9.81];", ""]
for i in range(n):
    out.append(f"body rod{i}: rigid_body {{ mass = m; inertia = [1e-4, m*L^2/12, m*L^2/12]; "
               f"position = [L*{i} + L/2, 0, 0]; }}")
for i in range(n):
    parent = "ground" if i == 0 else f"rod{i-1}"
    out.append(f"joint j{i}: revolute(rod{i}, {parent}) {{ at = [L*{i}, 0, 0]; axis = [0, 1, 0]; }}")
for i in range(1, n if springs else 1):
    out.append(f"force s{i}: spring_damper(rod{i}, rod{i-1}) {{ at_a = [L*{i} + L/2, 0, 0.01]; "
               f"at_b = [L*{i} - L/2, 0, 0.01]; stiffness = 50; damping = 0.1; }}")
out.append("simulate { end = 1; step = 1e-3; output_every = 0.01; }")
print("\n".join(out))
