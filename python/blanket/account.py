"""Accounting: certified (eps, delta) of shuffled local randomizers, their privacy curves,
and composition over rounds.

The numbers are those of ``blanket account shuffle|curve|compose --json`` for the same
inputs: the same Rust functions compute them. Every eps is an upper bound rounded to the
safe side; a method that is not certified (``variation-ratio``) is never reported as such.

A randomizer is ``"generic"`` (any eps0-LDP randomizer: only generic bounds apply),
``("krr", k)`` (k-ary randomized response at local privacy eps0), or
``("grr", m, gamma)`` (the privacy-blanket randomizer over m values with blanket
probability gamma; its eps0 follows from m and gamma, so ``eps0`` is omitted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np

from . import _blanket, _util

__all__ = ["shuffle", "curve", "compose", "ShuffleResult", "Curve", "Composition", "METHODS"]

Randomizer = Union[str, Tuple[str, int], Tuple[str, int, float]]

#: Every accountant's name, in the order reports list them ("best" takes the smallest
#: certified one).
METHODS: Tuple[str, ...] = (
    "blanket-closed",
    "erlingsson-closed",
    "fmt21-closed",
    "fmt21-numerical",
    "clones-krr",
    "variation-ratio",
    "grr-exact",
)


@dataclass(frozen=True)
class ShuffleResult:
    """The guarantee of n shuffled reports (``blanket account shuffle --json``).

    Attributes:
        epsilon: the certified eps at ``delta``; when nothing certifies an amplified eps,
            the local eps0 (which holds without amplification).
        method: the method asked ("best" or a name in :data:`METHODS`).
        certified_by: the method whose bound certified ``epsilon`` (None if none).
        valid: whether the method's conditions hold and its bound is certified.
        certified: whether ``epsilon`` is an amplification bound certified by a theorem or
            exact numerics (same as ``valid``).
        uncertified_epsilon: an uncertified method's own value (variation-ratio), for
            comparison only.
        reason: why no amplification is certified, if so.
        seconds: compute time.
        eps0, n, delta: the inputs; ``randomizer`` as the accountants saw it (a dict with
            ``kind`` "generic" or "grr").
        citation: the source of the bound.
        all: with method "best", every certified method's answer (dicts with ``method``,
            ``epsilon``, ``reason``, ``seconds``).
    """

    epsilon: float
    method: str
    certified_by: Optional[str]
    valid: bool
    certified: bool
    reason: Optional[str]
    seconds: float
    eps0: float
    n: int
    delta: float
    randomizer: Dict[str, Any]
    citation: str
    all: Optional[List[Dict[str, Any]]]
    uncertified_epsilon: Optional[float] = None
    _json: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``blanket account shuffle --json`` prints it."""
        return dict(self._json)


def _report(cls: Any, d: Dict[str, Any]) -> Any:
    return cls(**d, _json=d)


def shuffle(
    *,
    eps0: Optional[float] = None,
    n: Union[int, float],
    delta: float,
    randomizer: Randomizer = "generic",
    method: str = "best",
) -> ShuffleResult:
    """eps of n shuffled reports of an eps0-LDP randomizer at ``delta``.

    Args:
        eps0: local privacy of each report, in (0, 100]; omitted for ("grr", m, gamma).
        n: number of users (an integer from 2 to 2^48; 1e6 is accepted).
        delta: target delta, in (0, 1).
        randomizer: "generic", ("krr", k) or ("grr", m, gamma).
        method: "best" (the smallest certified bound) or one of :data:`METHODS`.

    Returns:
        A :class:`ShuffleResult` with the numbers of ``blanket account shuffle --json``.

    Raises:
        ParameterError: an input out of range (``.field`` names it, ``.allowed`` says the
            range).

    Example:
        >>> r = blanket.account.shuffle(eps0=2.0, n=1e6, delta=1e-8, randomizer=("krr", 10))
        >>> r.epsilon, r.certified_by
    """
    kind, domain, gamma = _util.randomizer(randomizer)
    text = _blanket.account_shuffle(
        _util.opt_real("eps0", eps0, "a number in (0, 100]"),
        _util.real("n", n, "an integer from 2 to 2^48"),
        _util.real("delta", delta, "in (0, 1)"),
        kind,
        domain,
        gamma,
        str(method),
    )
    return _report(ShuffleResult, _util.loads(text))


@dataclass(frozen=True)
class Curve:
    """The (eps, delta) curve of a shuffled randomizer, per method.

    Attributes:
        delta: the deltas (log-spaced over [delta_min, 0.1]), a float64 array.
        epsilon: method name -> float64 array of eps at each delta (NaN where the method
            does not apply).
        certified: method name -> whether its eps is a certified bound (False for
            variation-ratio, shown for comparison only).
        randomizer: the randomizer as the accountants saw it.
    """

    delta: np.ndarray
    epsilon: Dict[str, np.ndarray]
    certified: Dict[str, bool]
    randomizer: Dict[str, Any]
    n: int

    def to_dict(self) -> Dict[str, Any]:
        """The points as ``blanket account curve --json`` lists them (``delta``,
        ``method``, ``epsilon`` or None, ``certified``), with ``n`` and ``randomizer``."""
        points = []
        for i, d in enumerate(self.delta.tolist()):
            for m, eps in self.epsilon.items():
                e = float(eps[i])
                ok = not np.isnan(e)
                points.append(
                    {
                        "delta": d,
                        "method": m,
                        "epsilon": e if ok else None,
                        "certified": ok and self.certified[m],
                    }
                )
        return {"n": self.n, "randomizer": dict(self.randomizer), "points": points}


def curve(
    *,
    eps0: Optional[float] = None,
    n: Union[int, float],
    randomizer: Randomizer = "generic",
    delta_min: float = 1e-12,
    points: int = 23,
) -> Curve:
    """The (eps, delta) curve of n shuffled reports, per method, on ``points`` deltas
    log-spaced over [delta_min, 0.1] (the grid of ``blanket account curve``), computed in
    parallel with the GIL released.

    Args:
        eps0: local privacy, in (0, 100]; omitted for ("grr", m, gamma).
        n: number of users.
        randomizer: "generic", ("krr", k) or ("grr", m, gamma).
        delta_min: smallest delta, in (0, 0.1).
        points: number of deltas, 2 to 1000.

    Returns:
        A :class:`Curve` of numpy arrays.
    """
    kind, domain, gamma = _util.randomizer(randomizer)
    deltas, names, eps, certified, r = _blanket.account_curve(
        _util.opt_real("eps0", eps0, "a number in (0, 100]"),
        _util.real("n", n, "an integer from 2 to 2^48"),
        kind,
        domain,
        gamma,
        _util.real("delta_min", delta_min, "in (0, 0.1)"),
        _util.uint("points", points, "an integer from 2 to 1000"),
    )
    return Curve(
        delta=deltas,
        epsilon={m: eps[i] for i, m in enumerate(names)},
        certified=dict(zip(names, certified)),
        randomizer=_util.loads(r),
        n=int(_util.real("n", n, "an integer from 2 to 2^48")),
    )


@dataclass(frozen=True)
class Composition:
    """Total eps of k-fold composition (``blanket account compose --json``).

    Attributes:
        epsilon: the certified total eps at ``delta``.
        delta: the total delta.
        method: "basic", "drv", "kov" or "pld".
        count: the number of rounds.
        component_eps, component_delta: pair mode, the per-round (eps, delta); shuffled
            mode, the per-round point of the curve KOV used (the best split), or None.
        step: the PLD grid step (None for the other methods).
        seconds: compute time.
        eps0, n, randomizer, accountant, kov_epsilon: shuffled mode only (None otherwise);
            ``kov_epsilon`` is KOV of the best per-round split, beside the PLD's eps.
    """

    epsilon: float
    delta: float
    method: str
    count: int
    component_eps: Optional[float]
    component_delta: Optional[float]
    step: Optional[float]
    seconds: float
    eps0: Optional[float] = None
    n: Optional[int] = None
    randomizer: Optional[Dict[str, Any]] = None
    accountant: Optional[str] = None
    kov_epsilon: Optional[float] = None
    _json: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def to_dict(self) -> Dict[str, Any]:
        """The report as ``blanket account compose --json`` prints it."""
        return dict(self._json)


def compose(
    *,
    rounds: int,
    delta: float,
    eps: Optional[float] = None,
    component_delta: Optional[float] = None,
    method: Optional[str] = None,
    step: Optional[float] = None,
    eps0: Optional[float] = None,
    n: Optional[Union[int, float]] = None,
    randomizer: Optional[Randomizer] = None,
    accountant: Optional[str] = None,
) -> Composition:
    """Total eps of ``rounds``-fold composition at a total ``delta``.

    Pair mode (``eps``): rounds of an (eps, component_delta)-DP mechanism, by ``method``
    "basic", "drv", "kov" (default, exact) or "pld" (with grid ``step``).

    Shuffled mode (``eps0``, ``n``, ``randomizer``): rounds of a randomizer shuffled among
    n users; its whole certified curve (``accountant`` "fmt21-numerical", "clones-krr" or
    "grr-exact"; default clones-krr for k-RR, fmt21-numerical for generic) is composed by
    PLD, and KOV of the best per-round split is reported beside it.

    Raises:
        ParameterError: an input out of range or a mix of the two modes.
        NoGuaranteeError: no eps reaches ``delta``.
    """
    if randomizer is None:
        kind, domain, gamma = None, None, None
    else:
        kind, domain, gamma = _util.randomizer(randomizer)
    text = _blanket.account_compose(
        _util.uint("rounds", rounds, "an integer >= 1"),
        _util.real("delta", delta, "in (0, 1)"),
        _util.opt_real("eps", eps, "a finite number > 0"),
        _util.opt_real("component_delta", component_delta, "in [0, 1)"),
        None if method is None else str(method),
        _util.opt_real("step", step, "a finite number > 0"),
        _util.opt_real("eps0", eps0, "a number in (0, 100]"),
        _util.opt_real("n", n, "an integer from 2 to 2^48"),
        kind,
        domain,
        gamma,
        None if accountant is None else str(accountant),
    )
    return _report(Composition, _util.loads(text))
