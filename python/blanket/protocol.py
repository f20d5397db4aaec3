"""Protocols on numpy arrays: the client side (``randomize``) and the analyzer side
(``estimate``) of each shuffle-model protocol, for whole populations at once.

Arrays in, arrays out: no Python call per element. Long calls release the GIL and run on
blanket's parallel paths (users cut into chunks of 65536, one generator and one analyzer
state per chunk, merged at the end); ``threads=1`` runs on one thread, ``threads=None``
(the default) on all of them.

Randomness: ``rng=None`` (the default) draws from the operating system's CSPRNG, as real
clients must; ``rng=blanket.SimulationSeed(seed)`` makes a simulation reproducible (the
same messages for any number of threads) and is never for real clients.

A shuffler between the two sides does not change the estimate (the analyzers only count),
so ``estimate(randomize(x))`` is what the analyzer computes from the shuffled messages.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Optional, Tuple

import numpy as np

from . import _blanket
from .errors import parameter
from .rng import simulation_seed

__all__ = ["Histogram", "ScalarSum", "VectorSum", "ScalarSumEstimate", "VectorSumEstimate"]


def _threads(threads: Any) -> Optional[int]:
    if threads is None:
        return None
    if isinstance(threads, (int, np.integer)) and not isinstance(threads, bool) and 1 <= threads <= 1024:
        return int(threads)
    raise parameter("threads", "None or an integer from 1 to 1024", threads)


def _ints(field: str, a: Any) -> np.ndarray:
    """A one-dimensional integer array as uint32 or int64 (what the native side takes)."""
    x = np.asarray(a)
    if x.ndim != 1:
        raise parameter(field, "a one-dimensional integer array", f"an array of shape {x.shape}")
    if x.dtype == np.uint32:
        return np.ascontiguousarray(x)
    if x.dtype.kind not in "iu":
        if x.size == 0:
            return np.zeros(0, dtype=np.uint32)
        raise parameter(field, "an integer array", f"an array of dtype {x.dtype}")
    if x.dtype == np.uint64 and x.size and x.max() >= 2**63:
        raise parameter(field, "integers below 2^63", int(x.max()))
    return np.ascontiguousarray(x, dtype=np.int64)


def _u32(field: str, a: Any, allowed: str) -> np.ndarray:
    x = _ints(field, a)
    if x.dtype != np.uint32:
        if x.size and (x.min() < 0 or x.max() >= 2**32):
            bad = x.min() if x.min() < 0 else x.max()
            raise parameter(field, allowed, int(bad))
        x = x.astype(np.uint32)
    return x


def _floats(field: str, a: Any, ndim: int) -> np.ndarray:
    try:
        x = np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise parameter(field, "an array of numbers in [0, 1]", a) from None
    if x.ndim != ndim:
        shape = "(n,)" if ndim == 1 else "(n, d)"
        raise parameter(field, f"an array of shape {shape}", f"an array of shape {x.shape}")
    return x


class _GrrProtocol:
    """What the protocols share: the native object they wrap (``_p``), its blanket
    probability gamma, and a repr of their parameters (``_FIELDS``)."""

    _p: Any
    _FIELDS: Tuple[str, ...] = ()

    @property
    def gamma(self) -> float:
        """Blanket probability gamma."""
        return self._p.gamma

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"{type(self).__name__}({args})"


class Histogram(_GrrProtocol):
    """Histogram (frequency estimation) over ``domain`` categories with the
    privacy-blanket randomizer GRR(m, gamma): a user holding x reports x with probability
    1 - gamma + gamma/m and each other value with probability gamma/m (Balle, Bell,
    Gascon, Nissim 2019, Section 3). Calibrate gamma with
    :func:`blanket.calibrate.histogram` (``report.build()`` gives this object).

    Example:
        >>> h = blanket.calibrate.histogram(n=10**6, eps=1, delta=1e-8, domain=32).build()
        >>> messages = h.randomize(categories)        # client side, OS randomness
        >>> counts = h.estimate(messages)             # analyzer side, unbiased counts
    """

    _FIELDS = ("domain", "gamma")

    def __init__(self, domain: int, gamma: float) -> None:
        self._p = _blanket.Histogram(_uint("domain", domain), _real("gamma", gamma))

    @property
    def domain(self) -> int:
        """Number of categories m."""
        return self._p.domain

    @property
    def eps0(self) -> float:
        """Local privacy of one report: log(1 + m (1 - gamma) / gamma), rounded up."""
        return self._p.eps0

    def randomize(self, values: Any, rng: Any = None, *, threads: Optional[int] = None) -> np.ndarray:
        """Client side: one report per user.

        Args:
            values: the users' categories, integers in 0..domain-1 (any integer dtype).
            rng: None (the OS CSPRNG) or a :class:`blanket.SimulationSeed` (simulations).
            threads: None (all threads) or the number of threads.

        Returns:
            The messages, a uint32 array of the same length.

        Raises:
            ParameterError: a value outside 0..domain-1 (``field`` "values").
        """
        return self._p.randomize(_ints("values", values), simulation_seed(rng), _threads(threads))

    def estimate(self, messages: Any, *, threads: Optional[int] = None) -> np.ndarray:
        """Analyzer side: unbiased estimates of the number of users holding each category,
        (c_y - gamma n / m) / (1 - gamma) for c_y messages equal to y out of n.

        Returns:
            A float64 array of length ``domain``.

        Raises:
            ParameterError: a message outside 0..domain-1 (``field`` "messages").
        """
        return self._p.estimate(_ints("messages", messages), _threads(threads))

    def mean_count_variance(self, n: int) -> float:
        """Exact mean over the categories of the variance of an estimated count, for any
        data of n users."""
        return self._p.mean_count_variance(_uint("n", n))


class ScalarSumEstimate(NamedTuple):
    """The scalar-sum analyzer's estimates."""

    sum: float
    """Unbiased estimate of the sum of the users' values."""
    mean: float
    """The sum estimate divided by the number of reports."""
    reports: int
    """Number of reports received."""


class ScalarSum(_GrrProtocol):
    """Sum of values in [0, 1]: each user rounds its value at random to one of k + 1
    levels (unbiased) and reports it through GRR(k + 1, gamma) (Balle, Bell, Gascon,
    Nissim 2019, Section 4). Calibrate with :func:`blanket.calibrate.scalar_sum`."""

    _FIELDS = ("k", "gamma")

    def __init__(self, k: int, gamma: float) -> None:
        self._p = _blanket.ScalarSum(_uint("k", k), _real("gamma", gamma))

    @property
    def k(self) -> int:
        """Precision k (k + 1 message values)."""
        return self._p.k

    @property
    def eps0(self) -> float:
        """Local privacy of one report (GRR over k + 1 values), rounded up."""
        return self._p.eps0

    def randomize(self, values: Any, rng: Any = None, *, threads: Optional[int] = None) -> np.ndarray:
        """Client side: one report (a uint32 level in 0..k) per value in [0, 1].

        Raises:
            ParameterError: NaN or a value outside [0, 1] (``field`` "values").
        """
        return self._p.randomize(_floats("values", values, 1), simulation_seed(rng), _threads(threads))

    def estimate(self, messages: Any, *, threads: Optional[int] = None) -> ScalarSumEstimate:
        """Analyzer side: the debiased sum (and mean) of the users' values."""
        s, m, r = self._p.estimate(_ints("messages", messages), _threads(threads))
        return ScalarSumEstimate(s, m, r)

    def worst_case_sum_mse(self, n: int) -> float:
        """Worst case over data of n users of the expected squared error of the sum."""
        return self._p.worst_case_sum_mse(_uint("n", n))


class VectorSumEstimate(NamedTuple):
    """The vector-sum analyzer's estimates (float64 / uint64 arrays of length d)."""

    mean: np.ndarray
    """Estimated mean vector (0.5 for a coordinate nobody reported)."""
    sum: np.ndarray
    """Unbiased estimate of the sum vector."""
    reports: np.ndarray
    """Reports per coordinate."""


class VectorSum(_GrrProtocol):
    """Sum of vectors in [0, 1]^d (Scott, Cormode, Maple 2021): each user samples t of the
    d coordinates, rounds each at random to k levels and reports (coordinate, GRR(k + 1,
    gamma) of the level). Calibrate with :func:`blanket.calibrate.vector_sum`."""

    _FIELDS = ("d", "t", "k", "gamma")

    def __init__(self, d: int, t: int, k: int, gamma: float) -> None:
        self._p = _blanket.VectorSum(_uint("d", d), _uint("t", t), _uint("k", k), _real("gamma", gamma))

    @property
    def d(self) -> int:
        """Dimension d."""
        return self._p.d

    @property
    def t(self) -> int:
        """Coordinates reported per user."""
        return self._p.t

    @property
    def k(self) -> int:
        """Precision k."""
        return self._p.k

    def randomize(
        self, values: Any, rng: Any = None, *, threads: Optional[int] = None
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Client side: t messages per user for an (n, d) array of values in [0, 1].

        Returns:
            (coordinates, values): two uint32 arrays of length n t; user i's messages are
            at positions i t to (i + 1) t - 1.

        Raises:
            ParameterError: a wrong shape, NaN or a value outside [0, 1].
        """
        return self._p.randomize(_floats("values", values, 2), simulation_seed(rng), _threads(threads))

    def estimate(
        self, messages: Tuple[Any, Any], *, threads: Optional[int] = None
    ) -> VectorSumEstimate:
        """Analyzer side: the debiased mean and sum vectors from (coordinates, values)."""
        try:
            coords, vals = messages
        except (TypeError, ValueError):
            raise parameter("messages", "a pair (coordinates, values) of arrays", type(messages).__name__) from None
        c = _u32("coordinates", coords, f"integers from 0 to {self.d - 1}")
        v = _u32("values", vals, f"integers from 0 to {self.k}")
        mean, s, r = self._p.estimate(c, v, _threads(threads))
        return VectorSumEstimate(mean, s, r)

    def worst_case_mean_mse(self, n: int) -> float:
        """Worst case over data of n users of the expected squared error of the mean
        vector, summed over the d coordinates."""
        return self._p.worst_case_mean_mse(_uint("n", n))


def _uint(field: str, value: Any) -> int:
    from ._util import uint

    return uint(field, value, "a non-negative integer")


def _real(field: str, value: Any) -> float:
    from ._util import real

    return real(field, value, "a number")
