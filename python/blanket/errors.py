"""Exceptions raised by blanket. All are ``ValueError`` subclasses: bad input never aborts
the interpreter, and ``except ValueError`` catches every one of them."""

from __future__ import annotations

from typing import Optional

__all__ = [
    "BlanketError",
    "ParameterError",
    "InfeasibleError",
    "NoGuaranteeError",
    "MessageError",
]


class BlanketError(ValueError):
    """Base class of blanket's errors."""


class ParameterError(BlanketError):
    """A parameter outside its allowed range.

    Attributes:
        field: the parameter's name, as the Python API spells it (``"eps0"``, ``"n"``,
            ``"values"``, ...).
        allowed: the allowed range, in words.
        value: the rejected value, printed.
    """

    def __init__(self, message: str, *, field: str, allowed: str, value: str) -> None:
        super().__init__(message)
        self.field = field
        self.allowed = allowed
        self.value = value


class InfeasibleError(BlanketError):
    """No parameter choice certifies the target (e.g. too few users for the (eps, delta)
    asked).

    Attributes:
        min_n: the smallest number of users for which the calibration succeeds at this
            (eps, delta), or None if none up to 2^48 does.
    """

    def __init__(self, message: str, *, min_n: Optional[int] = None) -> None:
        super().__init__(message)
        self.min_n = min_n


class NoGuaranteeError(BlanketError):
    """Valid inputs for which the computation has no certified answer (e.g. no eps reaches
    the delta asked under composition)."""


class MessageError(BlanketError):
    """A message or analyzer state the analyzer cannot take."""


def parameter(field: str, allowed: str, value: object) -> ParameterError:
    """A :class:`ParameterError` with the usual message."""
    return ParameterError(
        f"{field} must be {allowed}, got {value!r}", field=field, allowed=allowed, value=repr(value)
    )
