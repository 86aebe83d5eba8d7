"""Type stubs of the native module fdc._fdc (python/src/*.rs)."""

from os import PathLike
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

ABI_VERSION: int

class FdcError(Exception): ...

class ModelError(FdcError):
    text: str
    diagnostics: List[Dict[str, Any]]

class SimulationError(FdcError):
    time: float
    results: "Results"

class Results:
    time: npt.NDArray[np.float64]
    channels: List[str]
    t_end: float
    steps: int
    rejected: int
    iterations: int
    factorizations: int
    wall_time: float
    warnings: List[str]
    def __getitem__(self, name: str) -> npt.NDArray[np.float64]: ...
    def __contains__(self, name: str) -> bool: ...
    def __len__(self) -> int: ...
    def keys(self) -> List[str]: ...
    def to_pandas(self) -> Any: ...

class Simulator:
    time: float
    step_size: float
    channels: List[str]
    inputs: List[str]
    def set_input(self, key: Union[str, int], value: float) -> None: ...
    def step(self) -> float: ...
    def advance_to(self, t: float) -> float: ...
    def outputs(self) -> npt.NDArray[np.float64]: ...
    def state(self) -> bytes: ...
    def restore(self, state: bytes) -> None: ...

class Model:
    path: str
    parameters: Dict[str, Union[float, List[float]]]
    inputs: Dict[str, float]
    channels: List[str]
    warnings: List[str]
    def run(self, set: Optional[Mapping[str, float]] = None, **settings: Any) -> Results: ...
    def simulator(
        self, set: Optional[Mapping[str, float]] = None, **settings: Any
    ) -> Simulator: ...
    def modes(
        self, at: float = 0.0, set: Optional[Mapping[str, float]] = None
    ) -> Dict[str, Any]: ...

def load(
    path: Union[str, PathLike],
    set: Optional[Mapping[str, float]] = None,
    *,
    simplify: bool = True,
    cache: bool = True,
    cache_dir: Optional[Union[str, PathLike]] = None,
    opt_level: int = 2,
) -> Model: ...
def check(path: Union[str, PathLike]) -> List[Dict[str, Any]]: ...

Row = Tuple[int, List[float], Optional[str], float, int, List[Optional[Tuple[float, float, float, float]]]]

def _axis(spec: str) -> Tuple[str, List[float]]: ...
def _combine(axes: Sequence[Tuple[str, Sequence[float]]], zip: bool) -> List[List[float]]: ...
def _sweep_run(
    path: Union[str, PathLike],
    names: Sequence[str],
    jobs: Sequence[Tuple[int, Sequence[float]]],
    *,
    set: Optional[Mapping[str, float]] = None,
    out: Optional[Union[str, PathLike]] = None,
    summary: Sequence[str] = (),
    threads: int = 0,
    simplify: bool = True,
    cache: bool = True,
    cache_dir: Optional[Union[str, PathLike]] = None,
    opt_level: int = 2,
    settings: Optional[Mapping[str, Any]] = None,
) -> List[Row]: ...
def _summary_csv(names: Sequence[str], channels: Sequence[str], rows: Sequence[Row]) -> str: ...
def _allocations() -> int: ...
