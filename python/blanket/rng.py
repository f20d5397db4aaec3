"""Where randomness comes from. Clients draw from the operating system's CSPRNG
(``rng=None``, the default, a ChaCha12 generator seeded from the OS per chunk of users);
a :class:`SimulationSeed` makes a run reproducible and is for simulations only."""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Optional

from .errors import parameter

__all__ = ["SimulationSeed"]


@dataclass(frozen=True)
class SimulationSeed:
    """A seed for reproducible simulations, never for real clients.

    ``protocol.randomize(values, rng=SimulationSeed(7))`` gives the same messages on every
    run and whatever the number of threads (users are cut into chunks of 65536, chunk c
    draws from ChaCha12 stream (seed, c)). Anyone who knows the seed can undo the
    randomization: real clients use ``rng=None`` (the OS CSPRNG).
    """

    seed: int

    def __post_init__(self) -> None:
        try:
            s = operator.index(self.seed)
        except TypeError:
            raise parameter("seed", "an integer from 0 to 2^64 - 1", self.seed) from None
        if not 0 <= s < 2**64:
            raise parameter("seed", "an integer from 0 to 2^64 - 1", self.seed)


def simulation_seed(rng: object) -> Optional[int]:
    """The seed of ``rng`` (None: the OS CSPRNG)."""
    if rng is None:
        return None
    if isinstance(rng, SimulationSeed):
        return operator.index(rng.seed)
    raise TypeError(
        "rng must be None (the operating system's CSPRNG, for real clients) or "
        f"blanket.SimulationSeed(seed) (simulations only), got {rng!r}"
    )
