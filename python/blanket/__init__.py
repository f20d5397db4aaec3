"""blanket: differential privacy in the shuffle model, from Python.

Each user runs a local randomizer on its value; a shuffler strips identities and permutes
the messages; an analyzer turns the anonymous multiset into an estimate. The random
reports of the crowd form a "privacy blanket" that hides every individual.

Modules:
    blanket.account    certified (eps, delta) of shuffled randomizers, curves, composition
                       (the numbers of ``blanket account ... --json``);
    blanket.calibrate  gamma (and k, t) for a target, as ``blanket calibrate ... --json``;
    blanket.protocol   clients and analyzers on numpy arrays (histogram, scalar sum,
                       vector sum), parallel, GIL released;
    blanket.errors     the exceptions (all ValueError subclasses);
    blanket.bench      ``python -m blanket.bench``: throughput and accountant timings.

Randomness: clients draw from the operating system's CSPRNG (``rng=None``);
:class:`SimulationSeed` is for reproducible simulations only.
"""

from . import account, calibrate, errors, protocol
from .errors import (
    BlanketError,
    InfeasibleError,
    MessageError,
    NoGuaranteeError,
    ParameterError,
)
from .rng import SimulationSeed

__version__ = "0.1.0"

__all__ = [
    "account",
    "calibrate",
    "protocol",
    "errors",
    "SimulationSeed",
    "BlanketError",
    "ParameterError",
    "InfeasibleError",
    "NoGuaranteeError",
    "MessageError",
]
