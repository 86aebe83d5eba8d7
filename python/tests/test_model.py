"""fdc.load, fdc.check, Model.run and Results against closed forms and the CLI."""

import csv
import subprocess
import threading

import numpy as np
import pytest

import fdc
from conftest import example, model


def elliptic_k(k: float) -> float:
    """Complete elliptic integral of the first kind K(k) by the arithmetic-geometric
    mean: K = pi / (2 AGM(1, sqrt(1 - k^2)))."""
    a, b = 1.0, np.sqrt(1.0 - k * k)
    while abs(a - b) > 1e-15:
        a, b = (a + b) / 2, np.sqrt(a * b)
    return np.pi / (2 * a)


def down_crossings(t, x):
    """Times where x crosses zero downwards, by linear interpolation."""
    i = np.nonzero((x[:-1] > 0) & (x[1:] <= 0))[0]
    return t[i] + (t[i + 1] - t[i]) * x[i] / (x[i] - x[i + 1])


# Largest deviation of z from the harmonic solution over 2 s at h = 1 ms [m].
TOL_OSC = 1.5e-4


def test_load_lists_parameters_inputs_and_channels():
    m = fdc.load(example("forced_oscillator.fd"))
    assert m.parameters == {"m": 1.0, "k": 100.0, "x0": 0.05}
    assert m.inputs == {"F": 0.0}
    # The model's own outputs, then the model totals (docs/results.md) last.
    assert "z" in m.channels and m.channels[-1] == "momentum.angular.z"
    assert m.channels.index("z") < m.channels.index("energy.total")
    assert "block.R.z" in m.channels and "spring.tension" in m.channels
    assert fdc.load(example("forced_oscillator.fd"), set={"k": 400}).parameters["k"] == 400.0


def test_a_model_with_errors_raises_with_the_text_and_the_diagnostics():
    with pytest.raises(fdc.ModelError) as info:
        fdc.load(model("broken.fd"))
    e = info.value
    assert "mass_of_block" in e.text and "mass_of_block" in str(e)
    [d] = [d for d in e.diagnostics if d["severity"] == "error"]
    assert d["code"] == "E0201"
    assert d["primary"]["line"] == 3 and d["primary"]["file"].endswith("broken.fd")


def test_check_returns_the_diagnostics():
    errors = [d for d in fdc.check(model("broken.fd")) if d["severity"] == "error"]
    assert [d["code"] for d in errors] == ["E0201"]
    assert [d for d in fdc.check(example("spring_mass.fd")) if d["severity"] == "error"] == []
    with pytest.raises(FileNotFoundError):
        fdc.check(model("no_such_file.fd"))


def test_bad_requests_raise_python_errors():
    m = fdc.load(example("spring_mass.fd"))
    with pytest.raises(TypeError, match="unknown setting `stepsize`"):
        m.run(stepsize=1e-3)
    with pytest.raises(ValueError):
        m.run(set={"no_such_parameter": 1.0})
    with pytest.raises(ValueError, match="bad settings|step"):
        m.run(step=-1.0)
    with pytest.raises(KeyError):
        m.run(end=0.01)["no.such.channel"]


@pytest.mark.parametrize("k", [100.0, 400.0])
def test_the_oscillator_follows_the_harmonic_solution(k):
    m = fdc.load(example("spring_mass.fd"))
    r = m.run(set={"k": k})
    exact = -0.05 * np.cos(np.sqrt(k) * r.time)
    assert np.max(np.abs(r["z"] - exact)) < TOL_OSC
    assert r.time[0] == 0.0 and r.time[-1] == 2.0 and len(r) == 201


def test_the_pendulum_period_is_the_elliptic_integral():
    r = fdc.load(example("pendulum.fd")).run()
    L, g = 1.0, 9.81
    # A uniform rod from horizontal: I/(m g d) = (L^2/3)/(g L/2), amplitude 90 degrees.
    period = 4 * np.sqrt(2 * L / (3 * g)) * elliptic_k(np.sin(np.pi / 4))
    measured = np.diff(down_crossings(r.time, r["tip.x"]))
    assert len(measured) >= 3
    assert np.max(np.abs(measured / period - 1)) < 2e-4


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    header, body = rows[0], np.array([[float(x) for x in row] for row in rows[1:]])
    return header, body


def test_run_equals_the_csv_of_the_command_line_bitwise(fdc_bin, tmp_path):
    out = tmp_path / "sm.csv"
    subprocess.run(
        [fdc_bin, example("spring_mass.fd"), "-q", "-o", str(out), "--set", "c=0.3"], check=True
    )
    header, body = read_csv(out)
    r = fdc.load(example("spring_mass.fd"), set={"c": 0.3}).run()
    assert header == ["time"] + r.channels
    assert np.array_equal(body[:, 0], r.time)
    for j, name in enumerate(r.channels, start=1):
        assert np.array_equal(body[:, j], r[name], equal_nan=True), name


def test_results_carry_the_run_summary_and_convert_to_pandas():
    r = fdc.load(example("spring_mass.fd")).run(end=1.0, step=1e-3, output_every=0.1)
    assert r.t_end == 1.0 and r.steps == 1000 and r.rejected == 0
    assert r.iterations >= r.steps and r.factorizations >= 1 and r.wall_time > 0
    assert len(r) == 11 and "time" in r and "z" in r and r.keys() == r.channels
    df = r.to_pandas()
    assert df.index.name == "time" and list(df.columns) == r.channels
    assert np.array_equal(df["z"].to_numpy(), r["z"])
    assert np.array_equal(df.index.to_numpy(), r.time)


def test_a_failed_run_raises_and_keeps_the_results_so_far():
    m = fdc.load(model("blowup.fd"))
    with pytest.raises(fdc.SimulationError) as info:
        m.run()
    e = info.value
    assert 0.29 < e.time <= 0.301
    assert "blow" in str(e)
    part = e.results
    assert part.time[-1] <= e.time and len(part) == 1 + int(round(part.time[-1] / 0.01))
    # The rows kept are those of a run that ends just before the failure.
    short = m.run(end=part.time[-1])
    assert np.array_equal(short["z"], part["z"]) and np.array_equal(short.time, part.time)


def test_the_gil_is_released_while_simulating():
    m = fdc.load(example("spring_mass.fd"))
    started = threading.Event()

    def work():
        started.set()
        m.run(end=40.0, output_every=1.0)

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    spins = 0
    while t.is_alive():
        spins += 1
    t.join()
    # Holding the GIL for the whole run would leave this thread a handful of turns.
    assert spins > 10000


@pytest.mark.parametrize("m, k", [(1.0, 400.0), (4.0, 100.0)])
def test_modes_of_the_oscillator_are_sqrt_k_over_m(m, k):
    modes = fdc.load(example("spring_mass.fd"), set={"m": m, "k": k}).modes()
    assert modes["free_dofs"] == 1 and modes["t"] == 0.0
    [osc] = [x for x in modes["modes"] if x["kind"] == "oscillation"]
    f = np.sqrt(k / m) / (2 * np.pi)
    assert abs(osc["frequency_hz"] - f) < 1e-6 * f
    assert abs(osc["damping_ratio"]) < 1e-6


def test_modes_at_a_later_time_and_bad_times():
    m = fdc.load(example("spring_mass.fd"))
    assert m.modes(at=0.5)["t"] == 0.5
    with pytest.raises(ValueError):
        m.modes(at=-1.0)
