"""Bad input raises a ValueError subclass naming the field and the allowed range; nothing
aborts the interpreter."""

from __future__ import annotations

import numpy as np
import pytest

import blanket
from blanket import InfeasibleError, NoGuaranteeError, ParameterError, SimulationSeed


@pytest.mark.parametrize(
    "call,field",
    [
        (lambda: blanket.account.shuffle(eps0=0.0, n=1000, delta=1e-6), "eps0"),
        (lambda: blanket.account.shuffle(eps0=101, n=1000, delta=1e-6), "eps0"),
        (lambda: blanket.account.shuffle(eps0=float("nan"), n=1000, delta=1e-6), "eps0"),
        (lambda: blanket.account.shuffle(n=1000, delta=1e-6), "eps0"),
        (lambda: blanket.account.shuffle(eps0=1, n=1, delta=1e-6), "n"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000.5, delta=1e-6), "n"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000, delta=1.5), "delta"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000, delta=1e-6, randomizer=("krr", 1)), "domain"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000, delta=1e-6, randomizer=("krr", -3)), "randomizer"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000, delta=1e-6, randomizer="rappor"), "randomizer"),
        (lambda: blanket.account.shuffle(n=1000, delta=1e-6, randomizer=("grr", 4, 1.5)), "gamma"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000, delta=1e-6, randomizer=("grr", 4, 0.5)), "eps0"),
        (lambda: blanket.account.shuffle(eps0=1, n=1000, delta=1e-6, method="magic"), "method"),
        (lambda: blanket.account.curve(eps0=1, n=1000, points=1), "points"),
        (lambda: blanket.account.curve(eps0=1, n=1000, delta_min=0.5), "delta_min"),
        (lambda: blanket.account.compose(rounds=0, delta=1e-6, eps=1), "rounds"),
        (lambda: blanket.account.compose(rounds=3, delta=1e-6, eps=1, method="best"), "method"),
        (lambda: blanket.account.compose(rounds=3, delta=1e-6), "eps"),
        (lambda: blanket.account.compose(rounds=3, delta=1e-6, eps0=1, n=1000, accountant="variation-ratio"), "accountant"),
        (lambda: blanket.calibrate.histogram(n=1e6, eps=-1, delta=1e-8, domain=10), "eps"),
        (lambda: blanket.calibrate.histogram(n=1e6, eps=1, delta=1e-8, domain=1), "domain"),
        (lambda: blanket.calibrate.histogram(n=1e6, eps=1, delta=1e-8, domain=10, accountant="x"), "accountant"),
        (lambda: blanket.calibrate.scalar_sum(n=1e6, eps=1, delta=1e-8, k=0), "k"),
        (lambda: blanket.calibrate.vector_sum(n=1e6, d=10, eps=1, delta=1e-8, t=11), "t"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=1.0), "gamma"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=0.5).randomize([3, 10]), "values"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=0.5).randomize([-1]), "values"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=0.5).randomize([0.5]), "values"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=0.5).randomize([[1]]), "values"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=0.5).estimate([11]), "messages"),
        (lambda: blanket.protocol.Histogram(domain=10, gamma=0.5).randomize([1], threads=0), "threads"),
        (lambda: blanket.protocol.ScalarSum(k=4, gamma=0.5).randomize([0.2, 1.5]), "values"),
        (lambda: blanket.protocol.ScalarSum(k=4, gamma=0.5).randomize([np.nan]), "values"),
        (lambda: blanket.protocol.ScalarSum(k=4, gamma=0.5).estimate([5]), "messages"),
        (lambda: blanket.protocol.VectorSum(d=3, t=1, k=2, gamma=0.5).randomize(np.zeros((2, 4))), "values"),
        (lambda: blanket.protocol.VectorSum(d=3, t=1, k=2, gamma=0.5).randomize(np.full((2, 3), 2.0)), "values"),
        (lambda: blanket.protocol.VectorSum(d=3, t=1, k=2, gamma=0.5).estimate(([3], [0])), "coordinates"),
        (lambda: blanket.protocol.VectorSum(d=3, t=1, k=2, gamma=0.5).estimate(([0], [3])), "values"),
        (lambda: SimulationSeed(-1), "seed"),
        (lambda: blanket.calibrate.ikos_sum(n=2 * 10**12, eps=1.0), "n"),
        (lambda: blanket.calibrate.ikos_sum(n=1000, eps=1.0, sigma=0), "sigma"),
        (lambda: blanket.calibrate.ikos_sum(n=1000, eps=1.0, sigma=40, delta=1e-9), "sigma"),
        (lambda: blanket.calibrate.ikos_sum(n=1000, eps=1.0, delta=2.0), "delta"),
    ],
)
def test_bad_input_names_the_field(call, field):
    with pytest.raises(ParameterError) as e:
        call()
    assert isinstance(e.value, ValueError)
    assert e.value.field == field, (e.value.field, str(e.value))
    assert e.value.allowed and e.value.allowed in str(e.value)


def test_infeasible_calibration_says_how_many_users_would_do():
    # The paper's closed form needs millions of users for eps = 0.01 at delta 1e-12.
    with pytest.raises(InfeasibleError) as e:
        blanket.calibrate.scalar_sum(n=10, eps=0.01, delta=1e-12, accountant="paper")
    assert isinstance(e.value, ValueError)
    assert e.value.min_n is not None and e.value.min_n > 10**6
    assert str(e.value.min_n) in str(e.value)


def test_no_guarantee_is_an_error():
    with pytest.raises(NoGuaranteeError):
        blanket.account.compose(rounds=100, delta=1e-9, eps=1.0, component_delta=1e-10, method="basic")


def test_a_bare_seed_is_refused():
    h = blanket.protocol.Histogram(domain=4, gamma=0.5)
    with pytest.raises(TypeError, match="SimulationSeed"):
        h.randomize([1, 2], rng=42)


def test_uncertified_method_reports_eps0_not_its_value():
    r = blanket.account.shuffle(eps0=1.0, n=10**4, delta=1e-8, randomizer=("krr", 4), method="variation-ratio")
    assert not r.certified and not r.valid and r.epsilon == 1.0 and r.uncertified_epsilon < 1.0
    assert "not a certified bound" in r.reason
