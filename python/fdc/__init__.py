"""fdc: compile and simulate multibody models written in the fd language.

    import fdc
    m = fdc.load("model.fd", set={"k": 100})
    r = m.run(end=2.0, step=1e-3)
    r["block.position.z"], r.time          # NumPy arrays

See docs/python.md for the whole API.
"""

from ._fdc import (
    ABI_VERSION,
    FdcError,
    Model,
    ModelError,
    Results,
    SimulationError,
    Simulator,
    check,
    load,
)
from ._sweep import Sweep, sweep

__all__ = [
    "ABI_VERSION",
    "FdcError",
    "Model",
    "ModelError",
    "Results",
    "SimulationError",
    "Simulator",
    "Sweep",
    "check",
    "load",
    "sweep",
]
