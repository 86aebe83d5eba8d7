#!/usr/bin/env python3
"""The revolute chain of bench/peers/compare.sh in MuJoCo: N nested bodies (built
through MjSpec, mujoco >= 3.2) of 1 kg and
0.5 m (inertia [1e-4, mL²/12, mL²/12] about the link's centre), hinge joints about y,
starting on the horizontal axis, gravity 9.81, h = 1 ms, contacts off, 0.5 s
simulated with the RK4 integrator (minimal coordinates, no constraints: MuJoCo's
fastest path for a chain). Prints CPU µs per mj_step (median of 5 runs of the
500 steps; on a shared machine wall
time counts other processes).

Usage: mujoco_chain.py N
"""
import sys
import time

import mujoco

n = int(sys.argv[1])
L, m, h, end = 0.5, 1.0, 1e-3, 0.5
i2 = m * L * L / 12

# Built through MjSpec rather than MJCF text: the XML parser refuses the nesting of
# chains much longer than 200 bodies (XML_ELEMENT_DEPTH_EXCEEDED), and the two give the
# same compiled model (masses, inertias, states after 500 steps bit for bit at N = 16).
spec = mujoco.MjSpec()
spec.option.timestep = h
spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
spec.option.gravity = [0, 0, -9.81]
spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
parent = spec.worldbody
for i in range(n):
    parent = parent.add_body(name=f"b{i}", pos=[0 if i == 0 else L, 0, 0], mass=m,
                             ipos=[L / 2, 0, 0], inertia=[1e-4, i2, i2],
                             explicitinertial=True)
    parent.add_joint(type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 1, 0], pos=[0, 0, 0])
model = spec.compile()
steps = int(round(end / h))
runs = []
for _ in range(5):
    data = mujoco.MjData(model)
    t0 = time.process_time()
    for _ in range(steps):
        mujoco.mj_step(model, data)
    runs.append((time.process_time() - t0) / steps * 1e6)
runs.sort()
print(f"mujoco N={n} us/step {runs[2]:.2f}")
