"""fdc.sweep: a parameter sweep on this machine's cores or on a Dask cluster.

The sweep itself (parameter sets, runs on threads, key figures, the summary table)
is the driver's, the same code as `fdc sweep`; this module only splits the runs
into chunks for the workers of a distributed executor and gathers their rows.
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _fdc

Values = Union[float, int, str, Sequence[float]]


def _axis(name: str, values: Values):
    """One swept parameter: a number, a list of numbers, or the command line's text
    ("10,20,40" or "0.1:1.0:10")."""
    if isinstance(values, str):
        return _fdc._axis(f"{name}={values}")
    if isinstance(values, (int, float)):
        return (name, [float(values)])
    return (name, [float(v) for v in values])


class Sweep:
    """The summary of a sweep: one row per run, in run order."""

    def __init__(self, names: List[str], channels: List[str], rows: list, out: Optional[str]):
        self.names = names
        self.channels = channels
        self._rows = rows
        self.out = out

    @property
    def rows(self) -> List[Dict[str, Any]]:
        """One dict per run: run, the parameters, status, t_end, steps,
        '<channel>.final/.min/.max/.rms', message."""
        out = []
        for index, values, error, t, steps, figures in self._rows:
            row: Dict[str, Any] = {"run": index}
            row.update(zip(self.names, values))
            row.update(status="failed" if error else "ok", t_end=t, steps=steps)
            for c, f in zip(self.channels, figures):
                for k, x in zip(("final", "min", "max", "rms"), f or (None,) * 4):
                    row[f"{c}.{k}"] = x
            row["message"] = error or ""
            out.append(row)
        return out

    @property
    def failed(self) -> List[int]:
        """Indices of the runs that failed."""
        return [r[0] for r in self._rows if r[2]]

    def csv(self) -> str:
        """The text of summary.csv (the same bytes `fdc sweep` writes)."""
        return _fdc._summary_csv(self.names, self.channels, self._rows)

    def to_pandas(self):
        """The summary as a pandas DataFrame (needs pandas)."""
        import pandas

        return pandas.DataFrame(self.rows).set_index("run")

    def __len__(self) -> int:
        return len(self._rows)

    def __repr__(self) -> str:
        return f"<fdc.Sweep {len(self)} runs, {len(self.failed)} failed>"


def _run_chunk(path: str, names: List[str], jobs: list, kwargs: dict) -> list:
    """What a worker runs: build the model once, run its share of the sets."""
    return _fdc._sweep_run(path, names, jobs, **kwargs)


def _workers(executor) -> int:
    info = executor.scheduler_info()
    return max(1, len(info.get("workers", {})))


def sweep(
    path: Union[str, os.PathLike],
    set: Mapping[str, Values],
    *,
    zip: bool = False,
    jobs: int = 0,
    out: Optional[Union[str, os.PathLike]] = None,
    summary: Iterable[str] = (),
    executor=None,
    chunks: Optional[int] = None,
    base: Optional[Mapping[str, float]] = None,
    simplify: bool = True,
    cache: bool = True,
    cache_dir: Optional[str] = None,
    opt_level: int = 2,
    **settings,
) -> Sweep:
    """Runs `path` for every parameter set of `set` ({"k": [10, 20], "c": "0:1:5"}),
    every combination (or the k-th values together with zip=True).

    jobs: threads (0: one per core; with an executor: per worker task, default 1).
    out: folder for run_NNNN.csv per run and summary.csv. summary: channels whose
    final/min/max/RMS go into the table. executor: a dask.distributed Client; the sets
    are cut into `chunks` pieces (default: one per worker), each built once on its
    worker. base: fixed parameter values. Other keywords are run settings (end,
    step, ...). A failed run is reported in its row; the others go on.
    """
    axes = [_axis(n, v) for n, v in set.items()]
    names = [a[0] for a in axes]
    sets = _fdc._combine(axes, zip)
    all_jobs = list(enumerate(sets))
    path = os.fspath(path)
    out = os.fspath(out) if out is not None else None
    summary = list(summary)
    kwargs = dict(
        set=dict(base or {}),
        out=out,
        summary=summary,
        simplify=simplify,
        cache=cache,
        cache_dir=cache_dir,
        opt_level=opt_level,
        settings=settings,
    )
    if executor is None:
        rows = _fdc._sweep_run(path, names, all_jobs, threads=jobs, **kwargs)
    else:
        kwargs["threads"] = jobs or 1
        n = chunks or _workers(executor)
        pieces = [all_jobs[i::n] for i in range(n) if all_jobs[i::n]]
        futures = [
            executor.submit(_run_chunk, path, names, piece, kwargs, pure=False)
            for piece in pieces
        ]
        rows = sorted((r for part in executor.gather(futures) for r in part), key=lambda r: r[0])
    result = Sweep(names, summary, rows, out)
    if out is not None:
        with open(os.path.join(out, "summary.csv"), "w") as f:
            f.write(result.csv())
    return result
