"""blanket.calibrate gives exactly the reports of `blanket calibrate ... --json`."""

from __future__ import annotations

import itertools

import pytest

import blanket
from conftest import without_seconds


@pytest.mark.parametrize(
    "n,eps,delta,domain,accountant",
    list(itertools.product([10**4, 10**6], [0.5, 2.0], [1e-8], [2, 100], ["best", "paper"])),
)
def test_histogram_equals_cli(cli, n, eps, delta, domain, accountant):
    args = ("calibrate", "histogram", "--n", n, "--eps", eps, "--delta", delta, "--domain", domain,
            "--accountant", accountant)
    try:
        py = blanket.calibrate.histogram(n=n, eps=eps, delta=delta, domain=domain, accountant=accountant)
    except blanket.InfeasibleError as e:
        # infeasible here: the CLI refuses too, with the same explanation
        assert str(e) in cli(*args, fails=True)["stderr"]
        return
    ref = cli(*args)
    assert without_seconds(py.to_dict()) == without_seconds(ref)
    assert py.gamma == ref["gamma"] and py.certified


@pytest.mark.parametrize(
    "n,eps,k,paper_domain",
    [(10**6, 1.0, None, False), (10**5, 0.5, 10, False), (10**6, 1.0, None, True), (10**5, 3.0, 4, True)],
)
def test_scalar_sum_equals_cli(cli, n, eps, k, paper_domain):
    py = blanket.calibrate.scalar_sum(n=n, eps=eps, delta=1e-8, k=k, paper_domain=paper_domain)
    flags = (["--k", k] if k else []) + (["--paper-domain"] if paper_domain else [])
    ref = cli("calibrate", "scalar-sum", "--n", n, "--eps", eps, "--delta", 1e-8, *flags)
    assert without_seconds(py.to_dict()) == without_seconds(ref)


@pytest.mark.parametrize(
    "n,d,eps,k,t",
    [(50_000, 100, 1.0, None, None), (10**5, 20, 0.5, 3, 1), (10**5, 50, 2.0, 4, 3)],
)
def test_vector_sum_equals_cli(cli, n, d, eps, k, t):
    py = blanket.calibrate.vector_sum(n=n, d=d, eps=eps, delta=1e-6, k=k, t=t)
    flags = (["--k", k] if k else []) + (["--t", t] if t else [])
    ref = cli("calibrate", "vector-sum", "--n", n, "--d", d, "--eps", eps, "--delta", 1e-6, *flags)
    assert without_seconds(py.to_dict()) == without_seconds(ref)
    assert py.d == d and py.protocol == "vector-sum"


def test_compare_equals_cli(cli):
    py = blanket.calibrate.histogram(n=10**5, eps=1.0, delta=1e-8, domain=10, compare=True)
    ref = cli("calibrate", "histogram", "--n", 10**5, "--eps", 1.0, "--delta", 1e-8, "--domain", 10, "--compare")
    assert without_seconds(py.to_dict()) == without_seconds(ref)
    assert len(py.alternatives) == 6 and all(a.method for a in py.alternatives)


def test_build_gives_the_calibrated_protocol():
    h = blanket.calibrate.histogram(n=10**5, eps=1.0, delta=1e-8, domain=10).build()
    assert isinstance(h, blanket.protocol.Histogram) and h.domain == 10
    s = blanket.calibrate.scalar_sum(n=10**5, eps=1.0, delta=1e-8).build()
    assert isinstance(s, blanket.protocol.ScalarSum)
    v = blanket.calibrate.vector_sum(n=10**5, d=10, eps=1.0, delta=1e-6, t=2).build()
    assert isinstance(v, blanket.protocol.VectorSum) and v.t == 2


@pytest.mark.parametrize(
    "n,eps,sigma,delta",
    [(1000, 1.0, None, None), (10_000, 0.5, 60, None), (500, 2.0, None, 1e-9)],
)
def test_ikos_sum_equals_cli(cli, n, eps, sigma, delta):
    py = blanket.calibrate.ikos_sum(n=n, eps=eps, sigma=sigma, delta=delta)
    flags = (["--sigma", sigma] if sigma else []) + (["--delta", delta] if delta else [])
    ref = cli("calibrate", "ikos-sum", "--n", n, "--eps", eps, *flags)
    assert py.to_dict() == ref
    assert py.protocol == "ikos-sum" and isinstance(py.q, int) and py.m >= 1
    if delta is not None:
        assert py.delta <= delta


def test_ikos_sum_never_certifies_a_vacuous_delta():
    # eps = 30 at sigma = 40 gave delta = 9.72 (issue 26): the default sigma now grows with
    # eps, and an explicit sigma that gives delta >= 1 is refused naming the sigma needed.
    r = blanket.calibrate.ikos_sum(n=10**6, eps=30.0)
    assert r.sigma == 64 and r.delta <= 1e-6
    with pytest.raises(blanket.errors.ParameterError) as e:
        blanket.calibrate.ikos_sum(n=10**6, eps=30.0, sigma=40)
    assert e.value.field == "sigma" and "64" in str(e.value)
    for eps in [1e-3, 0.1, 1.0, 10.0, 100.0]:
        assert blanket.calibrate.ikos_sum(n=1000, eps=eps).delta < 1
