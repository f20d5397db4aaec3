"""Notebook-style example: one figure of the vector-sum paper and one comparison of
accountants, from Python, with matplotlib.

Run (after building the package, see docs/python.md):

    python python/examples/paper_figures.py [--out DIR] [--reps 10] [--quick]

It writes DIR/vector-sum-t.png and DIR/accountants.png (default DIR: out/python-examples;
nothing is committed) and prints the numbers it plots.

# %% [markdown]
# ## 1. Error against t (Scott, Cormode, Maple 2021, Section 5)
#
# The paper's defaults: d = 100 coordinates, k = 3 levels, n = 50000 users,
# (eps, delta) = (0.95, 0.5), t = 1..10 coordinates per user, gamma from the paper's own
# closed form (Theorem 4.1 / Section 4.5, its m = k convention): `report.paper_gamma`. The
# paper finds the error lowest at t = 1. Data: smooth random curves in [0, 1] (like the
# heartbeats the paper uses; `blanket experiment vector-sum --sweep t` runs the same sweep
# on the ECG windows). Beside the paper's gamma, the gamma blanket *certifies* for the same
# target (true k + 1 domain, the tightest certified accountant).
#
# ## 2. Accountants compared
#
# eps of n shuffled k-RR reports (k = 10, eps0 = 2, delta = 1e-8) for n from 1e3 to 1e8,
# by every accountant; variation-ratio is not certified and is drawn dashed.
"""

from __future__ import annotations

import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import blanket  # noqa: E402
from blanket import SimulationSeed  # noqa: E402


def smooth_curves(n: int, d: int, seed: int) -> np.ndarray:
    """n smooth random curves of d samples in [0, 1] (a few random harmonics each)."""
    g = np.random.default_rng(seed)
    x = np.linspace(0, 1, d)
    f = np.arange(1, 5)
    a = g.normal(size=(n, 4)) / f
    phase = g.uniform(0, 2 * np.pi, size=(n, 4))
    y = np.einsum("nf,nfd->nd", a, np.sin(2 * np.pi * f[None, :, None] * x[None, None, :] + phase[:, :, None]))
    lo, hi = y.min(axis=1, keepdims=True), y.max(axis=1, keepdims=True)
    return (y - lo) / (hi - lo)


def observed_mse(p: blanket.protocol.VectorSum, data: np.ndarray, reps: int) -> float:
    truth = data.mean(axis=0)
    errs = []
    for r in range(reps):
        est = p.estimate(p.randomize(data, rng=SimulationSeed(1000 + r)))
        errs.append(np.sum((est.mean - truth) ** 2))
    return float(np.mean(errs))


# %% 1. error against t
def figure_t(out: pathlib.Path, reps: int, ts: list) -> None:
    n, d, k, eps, delta = 50_000, 100, 3, 0.95, 0.5
    data = smooth_curves(n, d, seed=1)
    rows = []
    for t in ts:
        paper = blanket.calibrate.vector_sum(n=n, d=d, eps=eps, delta=delta, k=k, t=t, paper_domain=True)
        g = paper.paper_gamma
        if g is None or g >= 1:
            print(f"t = {t}: the paper's formula gives no gamma < 1")
            continue
        p = blanket.protocol.VectorSum(d=d, t=t, k=k, gamma=g)
        mse = observed_mse(p, data, reps)
        certified = blanket.calibrate.vector_sum(n=n, d=d, eps=eps, delta=delta, k=k, t=t)
        pc = certified.build()
        rows.append((t, g, mse, p.worst_case_mean_mse(n), certified.gamma, observed_mse(pc, data, reps)))
        print(f"t = {t:2d}: paper gamma {g:.4f}, observed MSE {mse:.4g} (worst-case prediction "
              f"{rows[-1][3]:.4g}); certified gamma {certified.gamma:.4f} ({certified.method}), MSE {rows[-1][5]:.4g}")
    t_, _, mse, pred, _, cmse = map(np.array, zip(*rows))
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.semilogy(t_, mse, "o-", label="observed, paper's gamma (m = k)")
    ax.semilogy(t_, pred, "k--", label="exact worst-case prediction, paper's gamma")
    ax.semilogy(t_, cmse, "s-", label="observed, gamma certified by blanket (m = k + 1)")
    ax.set_xlabel("t (coordinates per user)")
    ax.set_ylabel("squared error of the mean vector (sum over d)")
    ax.set_title(f"Vector sum, d = {d}, k = {k}, n = {n}, eps = {eps}, delta = {delta}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "vector-sum-t.png", dpi=110)
    print(f"wrote {out / 'vector-sum-t.png'}")


# %% 2. accountants compared
def figure_accountants(out: pathlib.Path, ns: np.ndarray) -> None:
    eps0, delta, k = 2.0, 1e-8, 10
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for m in blanket.account.METHODS:
        xs, ys = [], []
        for n in ns:
            r = blanket.account.shuffle(eps0=eps0, n=int(n), delta=delta, randomizer=("krr", k), method=m)
            e = r.epsilon if r.certified else r.uncertified_epsilon
            if e is not None and (r.certified or m == "variation-ratio") and e < eps0:
                xs.append(n)
                ys.append(e)
        if not xs:
            print(f"{m}: does not apply here")
            continue
        certified = m != "variation-ratio"
        ax.loglog(xs, ys, "-" if certified else "--", marker="o", ms=3,
                  label=m if certified else f"{m} (NOT certified)")
        print(f"{m:18s} eps at n = {int(xs[-1]):.0e}: {ys[-1]:.4g}")
    ax.set_xlabel("n (users)")
    ax.set_ylabel("eps (upper bound)")
    ax.set_title(f"Shuffled {k}-RR, eps0 = {eps0}, delta = {delta}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "accountants.png", dpi=110)
    print(f"wrote {out / 'accountants.png'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="out/python-examples", help="output directory")
    ap.add_argument("--reps", type=int, default=10, help="repetitions per point")
    ap.add_argument("--quick", action="store_true", help="fewer points (a smoke run)")
    a = ap.parse_args()
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    figure_t(out, 2 if a.quick else a.reps, [1, 2, 4] if a.quick else list(range(1, 11)))
    figure_accountants(out, np.logspace(3, 8, 6 if a.quick else 16))


if __name__ == "__main__":
    main()
