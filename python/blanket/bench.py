"""``python -m blanket.bench``: how fast the Python path is, beside the Rust one.

Measures, best of several runs:

* randomize + estimate of n GRR (histogram) reports from a numpy array, with the OS
  CSPRNG (``rng=None``), on one thread and on all threads, in reports per second;
* one accountant call, ``blanket.account.shuffle`` (k-RR, best method), in seconds;

and, when the ``blanket`` CLI is found (``--cli PATH``, ``$BLANKET_CLI`` or ``PATH``), the
same accountant call through the CLI (process wall time and its own ``seconds``) and
``blanket bench``'s histogram throughput at the same n and domain. A benchmark, not a test:
the figures go in docs/python.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import time
from typing import Any, Callable, Dict, List, Optional

import numpy as np

import blanket


def _best(f: Callable[[], Any], tries: int) -> float:
    best = float("inf")
    for _ in range(tries):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def _cli(path: Optional[str]) -> Optional[str]:
    for p in (path, os.environ.get("BLANKET_CLI"), shutil.which("blanket")):
        if p and os.path.exists(p):
            return p
    return None


def run(n: int, domain: int, tries: int, cli: Optional[str]) -> Dict[str, Any]:
    """Runs the measurements and returns them as a dict."""
    report = blanket.calibrate.histogram(n=n, eps=1.0, delta=1e-8, domain=domain)
    h = report.build()
    values = np.random.default_rng(0).integers(0, domain, n).astype(np.uint32)
    out: Dict[str, Any] = {"n": n, "domain": domain, "gamma": h.gamma}

    def round_trip(threads: Optional[int]) -> Callable[[], Any]:
        return lambda: h.estimate(h.randomize(values, threads=threads), threads=threads)

    for label, threads in (("single_thread", 1), ("all_threads", None)):
        t = _best(round_trip(threads), tries)
        out[f"reports_per_second_{label}"] = n / t
        out[f"seconds_{label}"] = t
    m = h.randomize(values, threads=1)
    out["randomize_reports_per_second_single_thread"] = n / _best(lambda: h.randomize(values, threads=1), tries)
    out["estimate_reports_per_second_single_thread"] = n / _best(lambda: h.estimate(m, threads=1), tries)

    acct_args = dict(eps0=2.0, n=10**6, delta=1e-8, randomizer=("krr", 10))
    out["accountant"] = {
        "call": "account.shuffle(eps0=2, n=1e6, delta=1e-8, randomizer=('krr', 10), method='best')",
        "python_seconds": _best(lambda: blanket.account.shuffle(**acct_args), tries),
    }
    if cli:
        argv: List[str] = [cli, "--quiet", "account", "shuffle", "--eps0", "2", "--n", "1e6", "--delta", "1e-8",
                           "--randomizer", "krr", "--domain", "10", "--json"]
        inner: List[float] = []

        def call() -> None:
            p = subprocess.run(argv, capture_output=True, text=True, check=True)
            inner.append(json.loads(p.stdout)["seconds"])

        out["accountant"]["cli_process_seconds"] = _best(call, tries)
        out["accountant"]["cli_reported_seconds"] = min(inner)
        out["accountant"]["cli"] = cli
        p = subprocess.run([cli, "--quiet", "bench", "--n", str(n), "--domain", str(domain), "--json"],
                           capture_output=True, text=True)
        if p.returncode == 0:
            hist = json.loads(p.stdout)["histogram"]
            out["cli_bench_histogram"] = {
                "users_per_second_single_thread": hist["users_per_second_single_thread"],
                "users_per_second_all_threads": hist["users_per_second_all_threads"],
            }
    return out


def main(argv: Optional[List[str]] = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m blanket.bench", description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=float, default=1e6, help="reports per measurement (default 1e6)")
    ap.add_argument("--domain", type=int, default=1024, help="histogram categories (default 1024, as blanket bench)")
    ap.add_argument("--tries", type=int, default=5, help="runs per figure; the best is kept")
    ap.add_argument("--cli", help="path of the blanket CLI to compare with")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    r = run(int(a.n), a.domain, a.tries, _cli(a.cli))
    if a.json:
        print(json.dumps(r, indent=2))
        return
    print(f"GRR histogram, n = {r['n']}, domain = {r['domain']}, gamma = {r['gamma']:.4g}, rng = OS CSPRNG")
    for label in ("single_thread", "all_threads"):
        rate = r[f"reports_per_second_{label}"]
        print(f"  randomize + estimate, {label.replace('_', ' ')}: {rate / 1e6:8.1f} M reports/s "
              f"({1e9 / rate:.1f} ns per report)")
    print(f"    randomize alone, one thread: {r['randomize_reports_per_second_single_thread'] / 1e6:.1f} M/s; "
          f"estimate alone: {r['estimate_reports_per_second_single_thread'] / 1e6:.1f} M/s")
    if "cli_bench_histogram" in r:
        c = r["cli_bench_histogram"]
        print(f"  blanket bench (Rust), histogram: {c['users_per_second_single_thread'] / 1e6:.1f} M users/s one thread, "
              f"{c['users_per_second_all_threads'] / 1e6:.1f} M all threads")
    acc = r["accountant"]
    print(f"accountant, {acc['call']}: {acc['python_seconds'] * 1e3:.2f} ms from Python")
    if "cli_process_seconds" in acc:
        print(f"  CLI: {acc['cli_process_seconds'] * 1e3:.2f} ms per process "
              f"({acc['cli_reported_seconds'] * 1e3:.2f} ms inside, as its 'seconds' says)")


if __name__ == "__main__":
    main()
