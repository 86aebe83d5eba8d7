"""fdc.sweep on threads and on a Dask local cluster, and `fdc sweep` on the command
line: the same summary table, checked against the harmonic solution."""

import csv
import io
import os
import subprocess

import numpy as np
import pytest

import fdc
from conftest import example, model

X0 = 0.05


def test_summary_figures_follow_the_harmonic_solution(tmp_path):
    ks = [25.0, 100.0, 400.0]
    s = fdc.sweep(example("spring_mass.fd"), {"k": ks}, summary=["z"], out=tmp_path, jobs=2)
    assert len(s) == 3 and s.failed == []
    for row, k in zip(s.rows, ks):
        assert row["k"] == k and row["status"] == "ok" and row["t_end"] == 2.0
        assert row["steps"] == 2000
        assert row["z.min"] == -X0
        assert abs(row["z.final"] + X0 * np.cos(np.sqrt(k) * 2.0)) < 1e-4
        assert abs(row["z.max"] - X0) < 1e-4
        # RMS of the 201 samples of -x0 cos(w t) on [0, 2].
        t = np.linspace(0, 2, 201)
        assert abs(row["z.rms"] - np.sqrt(np.mean((X0 * np.cos(np.sqrt(k) * t)) ** 2))) < 5e-5
    names = sorted(os.listdir(tmp_path))
    assert names == ["run_0000.csv", "run_0001.csv", "run_0002.csv", "summary.csv"]
    assert (tmp_path / "summary.csv").read_text() == s.csv()
    # Each run's CSV is that run: the last z is the summary's final value.
    rows = list(csv.reader(open(tmp_path / "run_0002.csv")))
    assert float(rows[-1][rows[0].index("z")]) == s.rows[2]["z.final"]


def test_grid_and_zip_make_the_parameter_sets():
    g = fdc.sweep(example("spring_mass.fd"), {"k": [50, 100], "c": "0:1:3"}, end=0.01)
    assert [(r["k"], r["c"]) for r in g.rows] == [
        (50, 0.0), (50, 0.5), (50, 1.0), (100, 0.0), (100, 0.5), (100, 1.0)
    ]
    z = fdc.sweep(example("spring_mass.fd"), {"k": "50,100,200", "c": 0.5}, zip=True, end=0.01)
    assert [(r["k"], r["c"]) for r in z.rows] == [(50, 0.5), (100, 0.5), (200, 0.5)]
    with pytest.raises(ValueError, match="equal length"):
        fdc.sweep(example("spring_mass.fd"), {"k": [1, 2], "c": [1, 2, 3]}, zip=True)
    with pytest.raises(ValueError, match="no parameter `q`"):
        fdc.sweep(example("spring_mass.fd"), {"q": [1, 2]})
    with pytest.raises(ValueError, match="no channel"):
        fdc.sweep(example("spring_mass.fd"), {"k": [1]}, summary=["nope"])


def test_a_failed_run_is_reported_in_its_row_and_the_others_go_on(tmp_path):
    s = fdc.sweep(model("blowup.fd"), {"t_fail": [0.3, 5.0, 0.6]}, summary=["z"], out=tmp_path)
    assert s.failed == [0, 2]
    bad, ok, bad2 = s.rows
    assert bad["status"] == "failed" and "blow" in bad["message"] and 0.29 < bad["t_end"] < 0.31
    assert ok["status"] == "ok" and ok["t_end"] == 1.0 and ok["message"] == ""
    assert 0.59 < bad2["t_end"] < 0.61
    df = s.to_pandas()
    assert list(df["status"]) == ["failed", "ok", "failed"]


def test_the_command_line_writes_the_same_summary(fdc_bin, tmp_path):
    out = tmp_path / "cli"
    done = subprocess.run(
        [fdc_bin, "sweep", example("spring_mass.fd"), "--set", "k=25,100", "--set",
         "c=0:0.2:2", "--summary", "z", "--summary", "spring.tension", "-j", "2", "-o",
         str(out)],
        capture_output=True, text=True,
    )
    assert done.returncode == 0, done.stderr
    s = fdc.sweep(example("spring_mass.fd"), {"k": [25, 100], "c": "0:0.2:2"},
                  summary=["z", "spring.tension"])
    assert (out / "summary.csv").read_text() == s.csv()
    assert done.stdout == s.csv()
    table = list(csv.DictReader(io.StringIO(s.csv())))
    assert [r["c"] for r in table] == ["0.0", "0.2", "0.0", "0.2"]


def test_a_dask_local_cluster_gives_the_same_summary(tmp_path):
    import distributed
    sets = {"k": [25, 50, 100, 200], "c": [0.0, 0.5]}
    local = fdc.sweep(example("spring_mass.fd"), sets, summary=["z"], end=0.5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            remote = fdc.sweep(example("spring_mass.fd"), sets, summary=["z"], end=0.5,
                               executor=client, out=tmp_path)
    assert remote.csv() == local.csv()
    assert len(remote) == 8
    assert sorted(os.listdir(tmp_path))[-1] == "summary.csv"
    assert len(os.listdir(tmp_path)) == 9
