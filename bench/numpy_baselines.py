#!/usr/bin/env python3
"""Vectorized numpy baselines for the paths `blanket` times (issue 15).

Plain numpy as a user would write it: `numpy.random.default_rng` (PCG64, not cryptographic)
and floating-point coins (`rng.random(n) < p`), i.e. neither a CSPRNG nor exact sampling.
One thread (numpy runs these operations on one core). Each figure is the minimum over
`--runs` runs, in seconds (or users per second for the client path); with `--cpu`, of the
process's CPU time instead of wall time.

    python3 bench/numpy_baselines.py [--runs 7] [--json] [--cpu]

Paths (parameters as `blanket` calibrates them; see docs/performance.md):
  grr_client: GRR client + aggregate, 1e6 users, m = 16, gamma = 9.913e-4
              (`blanket bench --n 1e6 --domain 16`, histogram).
  simulate_histogram: 1e6 users x 10 repetitions, m = 32, gamma = 1.978e-3, with and
              without a uniform shuffle (`blanket simulate histogram --eps 1 --delta 1e-8
              --n 1e6 --reps 10 [--no-shuffle]`).
  simulate_vector_sum: the paper's defaults, n = 50000, d = 100, t = 1, k = 3,
              gamma = 5.630e-3, 10 repetitions, users drawn with replacement from 37401
              rows (the size of `--data ecg-windows`; random values here), with and without
              a shuffle (`blanket simulate vector-sum --n 50000 --d 100 --eps 0.95
              --delta 0.5 --t 1 --k 3 --data ecg-windows [--no-shuffle]`).
"""

import argparse
import json
import time

import numpy as np


CLOCK = time.perf_counter


def best(runs, f):
    t = float("inf")
    for _ in range(runs):
        s = CLOCK()
        f()
        t = min(t, CLOCK() - s)
    return t


def grr(rng, x, m, gamma):
    n = x.shape[0]
    blanket = rng.random(n) < gamma
    return np.where(blanket, rng.integers(0, m, n, dtype=np.uint32), x)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="time CPU seconds of this process (time.process_time) instead of wall time: "
        "less sensitive to other processes on a shared machine",
    )
    a = ap.parse_args()
    global CLOCK
    if a.cpu:
        CLOCK = time.process_time
    rng = np.random.default_rng(1)
    out = {}

    # GRR client + aggregate, 1e6 users, m = 16.
    n, m, gamma = 1_000_000, 16, 9.913488339298245e-4
    x = rng.integers(0, m, n, dtype=np.uint32)
    t = best(a.runs, lambda: np.bincount(grr(rng, x, m, gamma), minlength=m))
    out["grr_client"] = {"seconds": t, "users_per_second": n / t, "n": n, "m": m}

    # simulate histogram: 1e6 users x 10 repetitions, m = 32.
    n, m, gamma, reps = 1_000_000, 32, 0.0019783785511743304, 10
    x = rng.integers(0, m, n, dtype=np.uint32)

    def hist(shuffle):
        for _ in range(reps):
            y = grr(rng, x, m, gamma)
            if shuffle:
                y = rng.permutation(y)
            np.bincount(y, minlength=m)

    out["simulate_histogram"] = {
        "seconds_shuffled": best(a.runs, lambda: hist(True)),
        "seconds_no_shuffle": best(a.runs, lambda: hist(False)),
        "n": n,
        "m": m,
        "reps": reps,
    }

    # simulate vector-sum at the paper's defaults.
    n, d, k, gamma, reps, rows = 50_000, 100, 3, 0.005630014041616644, 10, 37401
    data = rng.random((rows, d))
    pick = rng.integers(0, rows, n)

    def vsum(shuffle):
        for _ in range(reps):
            j = rng.integers(0, d, n)
            xk = data[pick, j] * k
            low = np.floor(xk)
            level = low + (rng.random(n) < xk - low)
            blanket = rng.random(n) < gamma
            y = np.where(blanket, rng.integers(0, k + 1, n), level)
            if shuffle:
                perm = rng.permutation(n)
                j, y = j[perm], y[perm]
            np.bincount(j, minlength=d)
            np.bincount(j, weights=y, minlength=d)

    out["simulate_vector_sum"] = {
        "seconds_shuffled": best(a.runs, lambda: vsum(True)),
        "seconds_no_shuffle": best(a.runs, lambda: vsum(False)),
        "n": n,
        "d": d,
        "t": 1,
        "k": k,
        "reps": reps,
    }
    out["numpy"] = np.__version__
    if a.json:
        print(json.dumps(out, indent=2))
    else:
        for key, v in out.items():
            print(key, v)


if __name__ == "__main__":
    main()
