"""Protocols on numpy arrays: randomize + estimate recover known data within the exact
predicted error; randomness comes from the OS unless a simulation seed is given."""

from __future__ import annotations

import numpy as np
import pytest

import blanket
from blanket import SimulationSeed


def test_histogram_recovers_a_known_histogram():
    # 10^6 users over 16 categories with a skewed, known histogram; gamma calibrated for
    # (1, 1e-8). Fixed simulation seed: the test is deterministic. Tolerances: every count
    # within 5 exact standard deviations (two-sided tail 6e-7 per category), and the mean
    # squared error within [0.5, 1.5] of the exact prediction (16 near-independent squared
    # normals: its sd relative to the mean is about 0.35, so the band is about 1.4 sd).
    n, m = 10**6, 16
    truth = (np.arange(1, m + 1) ** 2 * n / np.sum(np.arange(1, m + 1) ** 2)).astype(np.int64)
    truth[0] += n - truth.sum()
    values = np.repeat(np.arange(m), truth)
    h = blanket.calibrate.histogram(n=n, eps=1.0, delta=1e-8, domain=m).build()
    messages = h.randomize(values, rng=SimulationSeed(2024))
    assert messages.dtype == np.uint32 and messages.shape == (n,)
    est = h.estimate(messages)
    assert est.dtype == np.float64 and est.shape == (m,)
    g = h.gamma
    a, b = 1 - g + g / m, g / m
    var = (truth * a * (1 - a) + (n - truth) * b * (1 - b)) / (1 - g) ** 2
    z = (est - truth) / np.sqrt(var)
    assert np.all(np.abs(z) < 5), z
    ratio = np.mean((est - truth) ** 2) / np.mean(var)
    assert 0.5 < ratio < 1.5, ratio
    assert abs(h.mean_count_variance(n) - np.mean(var)) / np.mean(var) < 1e-9
    # the estimates sum to n exactly (up to rounding)
    assert abs(est.sum() - n) < 1e-6 * n


def test_scalar_sum_recovers_the_sum():
    n = 10**6
    x = np.random.default_rng(1).random(n)
    p = blanket.calibrate.scalar_sum(n=n, eps=1.0, delta=1e-8).build()
    msgs = p.randomize(x, rng=SimulationSeed(7))
    assert msgs.max() <= p.k
    e = p.estimate(msgs)
    sd = np.sqrt(p.worst_case_sum_mse(n))
    assert abs(e.sum - x.sum()) < 5 * sd, (e.sum, x.sum(), sd)
    assert e.reports == n and abs(e.mean - e.sum / n) < 1e-12


def test_vector_sum_recovers_the_mean():
    n, d = 200_000, 20
    x = np.random.default_rng(2).random((n, d)) * np.linspace(0.1, 0.9, d)
    rep = blanket.calibrate.vector_sum(n=n, d=d, eps=1.0, delta=1e-6, t=2)
    p = rep.build()
    coords, vals = p.randomize(x, rng=SimulationSeed(3))
    assert coords.shape == vals.shape == (n * p.t,)
    assert len(np.unique(coords[:2])) == 2  # a user's t coordinates are distinct
    e = p.estimate((coords, vals))
    assert e.reports.sum() == n * p.t
    # total squared error of the mean vector against the worst-case prediction: within 3x
    # (the prediction is a worst case over data, so the observed error is usually below it)
    err = np.sum((e.mean - x.mean(axis=0)) ** 2)
    assert err < 3 * p.worst_case_mean_mse(n), (err, p.worst_case_mean_mse(n))
    assert rep.predicted_mse == pytest.approx(p.worst_case_mean_mse(n), rel=1e-9)


def test_os_randomness_differs_and_a_seed_reproduces():
    h = blanket.protocol.Histogram(domain=64, gamma=0.5)
    x = np.zeros(100_000, dtype=np.int64)
    a, b = h.randomize(x), h.randomize(x)
    assert not np.array_equal(a, b)  # rng=None: the OS CSPRNG, fresh each call
    s1 = h.randomize(x, rng=SimulationSeed(11))
    s2 = h.randomize(x, rng=SimulationSeed(11), threads=1)
    s3 = h.randomize(x, rng=SimulationSeed(12))
    assert np.array_equal(s1, s2)  # reproducible, whatever the number of threads
    assert not np.array_equal(s1, s3)
    p = blanket.protocol.ScalarSum(k=8, gamma=0.3)
    v = np.full(70_000, 0.5)
    assert np.array_equal(p.randomize(v, rng=SimulationSeed(1)), p.randomize(v, rng=SimulationSeed(1), threads=2))
    assert not np.array_equal(p.randomize(v), p.randomize(v))


def test_threads_do_not_change_the_estimate():
    h = blanket.protocol.Histogram(domain=10, gamma=0.2)
    msgs = h.randomize(np.arange(300_000) % 10, rng=SimulationSeed(5))
    assert np.array_equal(h.estimate(msgs), h.estimate(msgs, threads=1))
    assert np.array_equal(h.estimate(msgs), h.estimate(msgs.astype(np.int64), threads=3))


def test_integer_dtypes_are_accepted():
    h = blanket.protocol.Histogram(domain=5, gamma=0.5)
    for dt in (np.uint8, np.int16, np.int32, np.uint32, np.int64, np.uint64):
        out = h.randomize(np.arange(5, dtype=dt), rng=SimulationSeed(0))
        assert out.dtype == np.uint32 and out.shape == (5,)
    assert h.randomize([0, 1, 2], rng=SimulationSeed(0)).shape == (3,)
    assert h.estimate(np.array([], dtype=np.uint32)).shape == (5,)


def test_docstrings_show_in_help():
    for obj in (blanket.protocol.Histogram.randomize, blanket.calibrate.histogram, blanket.account.compose, blanket.SimulationSeed):
        assert obj.__doc__ and len(obj.__doc__) > 40


def test_bench_runs_and_reports_its_figures():
    # A smoke run of `python -m blanket.bench` (no timing is asserted: speed is measured by
    # the benchmark itself, docs/python.md).
    from blanket import bench

    r = bench.run(n=20_000, domain=16, tries=1, cli=None)
    assert r["n"] == 20_000 and r["reports_per_second_single_thread"] > 0
    assert r["accountant"]["python_seconds"] > 0
