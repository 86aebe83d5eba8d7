"""Model.simulator: inputs, steps, advance_to and outputs against the closed form of
the forced oscillator, z = F/k - (x0 + F/k) cos(sqrt(k/m) t)."""

import pickle

import numpy as np
import pytest

import fdc
from conftest import example
from conftest import model as example_model

X0 = 0.05
# An input set between steps is a jump of the force that the accelerations of the
# accepted state do not know: HHT's first steps after it are first order, which leaves
# errors up to ~1.5e-4 m here (amplitudes 0.05-0.06 m). Measured: 8e-5 (k = 400,
# F = 2, 1 s), 4.7e-5 (F = -1 at t = 0.12), 1.5e-4 (F 0 -> 3 at t = 0.5).
TOL = 2.5e-4


def forced(t, k, F, m=1.0):
    return F / k - (X0 + F / k) * np.cos(np.sqrt(k / m) * t)


@pytest.fixture(scope="module")
def model():
    return fdc.load(example("forced_oscillator.fd"))


def test_steps_follow_the_closed_form_with_an_input(model):
    sim = model.simulator(set={"k": 400.0}, step=1e-3)
    assert sim.inputs == ["F"] and sim.step_size == 1e-3 and sim.time == 0.0
    z = sim.channels.index("z")
    assert sim.outputs()[z] == -X0
    sim.set_input("F", 2.0)
    worst = 0.0
    for i in range(1, 1001):
        t = sim.step()
        if i % 50 == 0:
            worst = max(worst, abs(sim.outputs()[z] - forced(t, 400.0, 2.0)))
    assert abs(sim.time - 1.0) < 1e-12
    assert worst < TOL


def test_outputs_is_one_array_updated_in_place(model):
    sim = model.simulator()
    a = sim.outputs()
    before = a.copy()
    sim.step()
    b = sim.outputs()
    assert b is a and not np.array_equal(before, b)
    assert a.dtype == np.float64 and a.shape == (len(sim.channels),)


def test_advance_to_ends_exactly_at_the_target(model):
    sim = model.simulator(step=1e-3)
    sim.set_input(0, -1.0)
    assert sim.advance_to(0.1234) == pytest.approx(0.1234, abs=1e-12)
    z = sim.outputs()[sim.channels.index("z")]
    assert abs(z - forced(0.1234, 100.0, -1.0)) < TOL
    assert sim.advance_to(0.1234) == pytest.approx(0.1234, abs=1e-12)


def test_an_input_change_mid_run_starts_a_new_free_motion(model):
    sim = model.simulator(step=1e-3)
    sim.advance_to(0.5)
    z = sim.channels.index("z")
    out = sim.outputs()
    z1 = out[z]
    v1 = out[sim.channels.index("block.Rdot.z")]
    sim.set_input("F", 3.0)
    sim.advance_to(1.0)
    w, F, k = 10.0, 3.0, 100.0
    tau = 0.5
    exact = F / k + (z1 - F / k) * np.cos(w * tau) + v1 / w * np.sin(w * tau)
    assert abs(sim.outputs()[z] - exact) < TOL


def test_bad_inputs_raise(model):
    sim = model.simulator()
    with pytest.raises(KeyError, match="no input `G`"):
        sim.set_input("G", 1.0)
    with pytest.raises(IndexError):
        sim.set_input(3, 1.0)


def test_a_loop_of_steps_allocates_nothing_on_the_rust_side(model):
    sim = model.simulator(newton="fixed:2")
    for _ in range(10):  # warm up: first steps may size the factorization
        sim.step()
        sim.outputs()
    before = fdc._fdc._allocations()
    for _ in range(10000):
        sim.step()
        sim.set_input("F", 0.5)
        sim.outputs()
    assert fdc._fdc._allocations() - before == 0


def drive_rotor(sim, steps):
    """`steps` steps with T(t) = 2 sin(3t) set before each; the outputs after each."""
    rows = []
    for _ in range(steps):
        sim.set_input("T", 2.0 * np.sin(3.0 * sim.time))
        sim.step()
        rows.append(sim.outputs().copy())
    return np.array(rows)


@pytest.mark.parametrize("settings", [{}, {"adaptive": 1e-6}], ids=["fixed", "adaptive"])
def test_a_restored_state_repeats_the_steps_bitwise(settings):
    # The rotor's torsion spring keeps its continuous angle as element state and is
    # driven through the input T: run 1 s, save, run to 2 s (A); restore, run to 2 s
    # again (B) and in a new simulator from the pickled state (C): A == B == C bitwise.
    m = fdc.load(example_model("rotor.fd"))
    sim = m.simulator(step=1e-2, **settings)
    drive_rotor(sim, 100)
    saved = sim.state()
    assert isinstance(saved, bytes) and sim.time == pytest.approx(1.0, abs=1e-12)
    a = drive_rotor(sim, 100)
    sim.restore(saved)
    assert sim.time == pytest.approx(1.0, abs=1e-12)
    b = drive_rotor(sim, 100)
    assert a.tobytes() == b.tobytes()
    other = m.simulator(step=1e-2, **settings)
    other.restore(pickle.loads(pickle.dumps(saved)))
    c = drive_rotor(other, 100)
    assert a.tobytes() == c.tobytes()
    # The spring counted turns past ±π, so its state took part.
    angle = sim.channels.index("spring.angle")
    assert np.abs(a[:, angle]).max() > np.pi


def test_restoring_a_state_of_another_model_raises(model):
    rotor = fdc.load(example_model("rotor.fd")).simulator()
    rotor.step()
    before = rotor.state()
    with pytest.raises(fdc.FdcError, match="another model"):
        rotor.restore(model.simulator().state())
    with pytest.raises(fdc.FdcError, match="cannot restore"):
        rotor.restore(before[:-3])
    assert rotor.state() == before
