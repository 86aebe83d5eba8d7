#!/usr/bin/env python3
"""The revolute chain of bench/peers/compare.sh in Exudyn: N links of 1 kg and 0.5 m
(slender rods, inertia [1e-4, mL²/12, mL²/12]) hanging from a pivot, starting on the
horizontal axis, revolute joints about y, gravity 9.81, h = 1 ms, 0.5 s simulated.
Exudyn's implicit generalized-α (index 3) with the spectral radius of fdc's default HHT
α = -0.05, ρ∞ = (1 + α) / (1 - α), and its sparse linear solver. Prints µs per step
(CPU time of SolveDynamic / steps: on a shared machine wall time counts other
processes).

Usage: exudyn_chain.py N
"""
import sys
import time

import exudyn as exu
import numpy as np
import exudyn.utilities as eu

n = int(sys.argv[1])
L, m, h, end = 0.5, 1.0, 1e-3, 0.5
alpha = -0.05

SC = exu.SystemContainer()
mbs = SC.AddSystem()
ground = mbs.CreateGround(referencePosition=[0, 0, 0])
previous = ground
i2 = m * L * L / 12
inertia = eu.RigidBodyInertia(mass=m, inertiaTensor=np.diag([1e-4, i2, i2]))
for i in range(n):
    body = mbs.CreateRigidBody(referencePosition=[L * i + L / 2, 0, 0], inertia=inertia,
                               gravity=[0, 0, -9.81])
    mbs.CreateRevoluteJoint(itemNumbers=[body, previous], position=[L * i, 0, 0],
                            axis=[0, 1, 0])
    previous = body
mbs.Assemble()

s = exu.SimulationSettings()
s.timeIntegration.numberOfSteps = int(round(end / h))
s.timeIntegration.endTime = end
s.timeIntegration.verboseMode = 0
s.timeIntegration.generalizedAlpha.spectralRadius = (1 + alpha) / (1 - alpha)
s.linearSolver.solverType = exu.LinearSolverType.EigenSparse
s.solution.file.write = False

t0 = time.process_time()
exu.SolveDynamic(mbs, s)
cpu = time.process_time() - t0
print(f"exudyn N={n} us/step {cpu / s.timeIntegration.numberOfSteps * 1e6:.2f}")
