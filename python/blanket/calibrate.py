"""Calibration: the blanket probability gamma (and the precision k, and the coordinates t
per user for vectors) that meets a target (eps, delta) with n users, certified by the
tightest bound blanket has (``accountant="best"``) or the paper's closed form
(``accountant="paper"``).

The reports are those of ``blanket calibrate histogram|scalar-sum|vector-sum --json`` for
the same inputs (same keys, same numbers: the same Rust functions compute them), as typed
objects; ``report.to_dict()`` gives the JSON object and ``report.build()`` the protocol
with the calibrated parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from . import _blanket, _util
from .protocol import Histogram, ScalarSum, VectorSum

__all__ = [
    "histogram",
    "scalar_sum",
    "vector_sum",
    "ikos_sum",
    "CalibrationReport",
    "MethodFigures",
    "IkosCalibration",
]


@dataclass(frozen=True)
class MethodFigures:
    """One method's calibration of the same protocol and target, for comparison: its
    smallest certified ``gamma`` (None if it certifies none, with ``error`` saying why), the
    ``k`` and ``t`` it leads to, and the ``predicted_mse`` there."""

    method: str
    gamma: Optional[float]
    k: Optional[int]
    t: Optional[int]
    predicted_mse: Optional[float]
    error: Optional[str]
    seconds: float


@dataclass(frozen=True)
class CalibrationReport:
    """What ``blanket calibrate ... --json`` prints.

    Attributes:
        protocol: "histogram", "scalar-sum" or "vector-sum".
        n, eps, delta: the target.
        gamma: the blanket probability (rounded up, certified).
        eps0: local privacy of one message; ``eps0_user``: of everything one user sends.
        k: precision (sums); ``d``, ``t``: dimension and coordinates per user (vectors).
        message_values: values a message takes; ``accounted_domain``: the domain size the
            accountant was told (they differ only with ``paper_domain``).
        predicted_mse: the exact predicted error; ``predicted_mse_meaning`` says of what.
        paper_bound_mse: the paper's bound on the same quantity, where there is one.
        method: the method that certified the guarantee; ``citation`` its source.
        certified_epsilon: certified eps of the randomizer users really run (None if not
            certifiable), at ``certified_delta``.
        notes: caveats for the reader.
        paper_gamma: vectors, the gamma of the paper's closed form (for comparison).
        paper: the same calibration under the paper's closed form, when it is not the
            method used.
        alternatives: with ``compare=True``, every certified method's figures.
    """

    protocol: str
    n: int
    eps: float
    delta: float
    gamma: float
    eps0: float
    eps0_user: float
    k: Optional[int]
    message_values: int
    accounted_domain: int
    paper_domain: bool
    predicted_mse: float
    predicted_mse_meaning: str
    paper_bound_mse: Optional[float]
    method: str
    citation: str
    certified_epsilon: Optional[float]
    certified_delta: float
    notes: List[str]
    d: Optional[int] = None
    t: Optional[int] = None
    paper_gamma: Optional[float] = None
    paper: Optional[MethodFigures] = None
    alternatives: List[MethodFigures] = field(default_factory=list)
    _json: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def certified(self) -> bool:
        """Whether the target guarantee is certified for the randomizer users run."""
        return self.certified_epsilon is not None and self.certified_epsilon <= self.eps

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``blanket calibrate ... --json`` prints it."""
        return dict(self._json)

    def build(self) -> Union[Histogram, ScalarSum, VectorSum]:
        """The protocol with these parameters (clients and analyzer on numpy arrays)."""
        if self.protocol == "histogram":
            return Histogram(domain=self.message_values, gamma=self.gamma)
        if self.protocol == "scalar-sum":
            return ScalarSum(k=self.k, gamma=self.gamma)
        return VectorSum(d=self.d, t=self.t, k=self.k, gamma=self.gamma)


def _report(text: str) -> CalibrationReport:
    d = _util.loads(text)
    args = dict(d)
    if d.get("paper") is not None:
        args["paper"] = MethodFigures(**d["paper"])
    args["alternatives"] = [MethodFigures(**a) for a in d.get("alternatives", [])]
    return CalibrationReport(**args, _json=d)


_N = "an integer from 2 to 2^48"
_EPS = "a finite number > 0"
_DELTA = "in (0, 1)"


def histogram(
    *,
    n: Union[int, float],
    eps: float,
    delta: float,
    domain: int,
    accountant: str = "best",
    compare: bool = False,
) -> CalibrationReport:
    """Calibrates the histogram protocol (privacy-blanket GRR over ``domain`` categories).

    Args:
        n: number of users.
        eps, delta: the target guarantee.
        domain: number of categories m, 2 to 2^26.
        accountant: "best" (the tightest certified bound) or "paper" (Balle et al. 2019,
            Theorem 3.1).
        compare: also calibrate under every certified method (``report.alternatives``).

    Raises:
        ParameterError: an input out of range.
        InfeasibleError: no gamma < 1 certifies the target (``.min_n`` says how many users
            would do).
    """
    return _report(
        _blanket.calibrate_histogram(
            _util.real("n", n, _N),
            _util.real("eps", eps, _EPS),
            _util.real("delta", delta, _DELTA),
            _util.uint("domain", domain, "an integer from 2 to 2^26"),
            str(accountant),
            bool(compare),
        )
    )


def scalar_sum(
    *,
    n: Union[int, float],
    eps: float,
    delta: float,
    k: Optional[int] = None,
    paper_domain: bool = False,
    accountant: str = "best",
    compare: bool = False,
) -> CalibrationReport:
    """Calibrates the scalar-sum protocol (values in [0, 1], randomized rounding to k
    levels, GRR over k + 1 values).

    Args:
        n: number of users.
        eps, delta: the target guarantee.
        k: fixed precision (default: the k minimizing the predicted worst-case MSE).
        paper_domain: calibrate with the paper's m = k instead of the true k + 1 values
            (for reproducing the paper only: the guarantee is then NOT certified).
        accountant: "best" or "paper".
        compare: also calibrate under every certified method.
    """
    return _report(
        _blanket.calibrate_scalar_sum(
            _util.real("n", n, _N),
            _util.real("eps", eps, _EPS),
            _util.real("delta", delta, _DELTA),
            _util.opt_uint("k", k, "an integer from 1 to 67108863"),
            bool(paper_domain),
            str(accountant),
            bool(compare),
        )
    )


def vector_sum(
    *,
    n: Union[int, float],
    d: int,
    eps: float,
    delta: float,
    k: Optional[int] = None,
    t: Optional[int] = None,
    paper_domain: bool = False,
    accountant: str = "best",
    compare: bool = False,
) -> CalibrationReport:
    """Calibrates the vector-sum protocol (Scott, Cormode, Maple 2021: t sampled
    coordinates per user, each rounded to k levels and randomized by GRR over k + 1
    values).

    Args:
        n: number of users.
        d: dimension of the vectors.
        eps, delta: the target guarantee.
        k: fixed precision (default: the k minimizing the predicted error).
        t: fixed coordinates per user (default: the t minimizing the predicted error).
        paper_domain: calibrate with the paper's k values per coordinate instead of k + 1
            (for reproducing the paper only: NOT certified).
        accountant: "best" or "paper".
        compare: also calibrate under every certified method.
    """
    return _report(
        _blanket.calibrate_vector_sum(
            _util.real("n", n, _N),
            _util.uint("d", d, "an integer from 1 to 2^26"),
            _util.real("eps", eps, _EPS),
            _util.real("delta", delta, _DELTA),
            _util.opt_uint("k", k, "an integer from 1 to 67108863"),
            _util.opt_uint("t", t, "an integer from 1 to d"),
            bool(paper_domain),
            str(accountant),
            bool(compare),
        )
    )


@dataclass(frozen=True)
class IkosCalibration:
    """What ``blanket calibrate ikos-sum --json`` prints: the multi-message DP sum over
    split-and-mix (IKOS), m additive shares per client modulo q, exact distributed discrete
    Laplace noise. There is no gamma: eps fixes the noise, sigma fixes
    delta = (1 + e^eps) 2^-sigma (docs/multi-message.md).

    Attributes:
        n, eps: clients and target eps; ``p``: precision; ``q``: the modulus; ``m``: shares
        per client; ``alpha``: the noise parameter; ``sigma``: the security parameter;
        ``eps_realized``: the eps the rounded alpha gives; ``delta``: the certified delta
        (always below 1); ``honest_present_users``: the clients the guarantee covers (n);
        ``noise_bound``: T; ``predicted_mse`` (what it bounds: ``predicted_mse_meaning``);
        ``bytes_per_user``; ``assumes``: the trust assumption; ``calibration``: why no
        gamma.
    """

    protocol: str
    n: int
    eps: float
    p: int
    q: int
    m: int
    alpha: float
    sigma: int
    eps_realized: float
    delta: float
    honest_present_users: int
    noise_bound: int
    predicted_mse: float
    predicted_mse_meaning: str
    bytes_per_user: int
    assumes: str
    calibration: str
    _json: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``blanket calibrate ikos-sum --json`` prints it."""
        return dict(self._json)


def ikos_sum(
    *,
    n: Union[int, float],
    eps: float,
    sigma: Optional[int] = None,
    delta: Optional[float] = None,
) -> IkosCalibration:
    """Parameters of the IKOS split-and-mix DP sum of values in [0, 1].

    Args:
        n: number of clients, 2 to 30000.
        eps: target epsilon.
        sigma: security parameter, 1 to 512; refused if delta = (1 + e^eps) 2^-sigma is
            not below 1. Default: the larger of 40 and the smallest sigma with
            delta <= 1e-6 (sigma grows with eps); or
        delta: the target delta instead, which fixes the smallest sigma meeting it.

    Raises:
        ParameterError: an input out of range (``field`` names it).
    """
    d = _util.loads(
        _blanket.calibrate_ikos_sum(
            _util.real("n", n, "an integer from 2 to 30000"),
            _util.real("eps", eps, _EPS),
            _util.opt_uint("sigma", sigma, "an integer from 1 to 512"),
            _util.opt_real("delta", delta, _DELTA),
        )
    )
    return IkosCalibration(**d, _json=d)
