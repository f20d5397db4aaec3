"""Argument checks shared by the modules (Python side of the bindings)."""

from __future__ import annotations

import json
import operator
from typing import Any, Optional, Tuple

from .errors import parameter

U64 = 2**64


def uint(field: str, value: Any, allowed: str) -> int:
    """``value`` as a non-negative integer below 2^64, or ParameterError."""
    try:
        v = operator.index(value)
    except TypeError:
        raise parameter(field, allowed, value) from None
    if not 0 <= v < U64:
        raise parameter(field, allowed, value)
    return v


def opt_uint(field: str, value: Any, allowed: str) -> Optional[int]:
    """:func:`uint`, None passing through."""
    return None if value is None else uint(field, value, allowed)


def real(field: str, value: Any, allowed: str) -> float:
    """``value`` as a float, or ParameterError (NaN and ranges are checked in Rust)."""
    if isinstance(value, bool):
        raise parameter(field, allowed, value)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise parameter(field, allowed, value) from None


def opt_real(field: str, value: Any, allowed: str) -> Optional[float]:
    """:func:`real`, None passing through."""
    return None if value is None else real(field, value, allowed)


RANDOMIZER = "'generic', ('krr', k) or ('grr', m, gamma)"


def randomizer(r: Any) -> Tuple[str, Optional[int], Optional[float]]:
    """(kind, domain, gamma) of ``"generic" | ("krr", k) | ("grr", m, gamma)``."""
    if r == "generic" or r == ("generic",):
        return ("generic", None, None)
    if isinstance(r, (tuple, list)) and len(r) == 2 and r[0] == "krr":
        return ("krr", uint("randomizer", r[1], "('krr', k) with k >= 2 values"), None)
    if isinstance(r, (tuple, list)) and len(r) == 3 and r[0] == "grr":
        m = uint("randomizer", r[1], "('grr', m, gamma) with m >= 2 values")
        return ("grr", m, real("gamma", r[2], "in the open interval (0, 1)"))
    raise parameter("randomizer", RANDOMIZER, r)


def loads(text: str) -> Any:
    """The JSON report the native module returns."""
    return json.loads(text)
