"""Type stubs of the native module ``blanket._blanket`` (Rust, PyO3, abi3). Use the
documented Python API (``blanket.account``, ``blanket.calibrate``, ``blanket.protocol``);
these functions return the CLI's ``--json`` reports as JSON text."""

from typing import List, Optional, Tuple

import numpy as np
import numpy.typing as npt

CHUNK: int
EPS0_MAX: float

def account_shuffle(
    eps0: Optional[float],
    n: float,
    delta: float,
    kind: str,
    domain: Optional[int],
    gamma: Optional[float],
    method_name: str,
) -> str: ...
def account_curve(
    eps0: Optional[float],
    n: float,
    kind: str,
    domain: Optional[int],
    gamma: Optional[float],
    delta_min: float,
    points: int,
) -> Tuple[npt.NDArray[np.float64], List[str], npt.NDArray[np.float64], List[bool], str]: ...
def account_compose(
    rounds: int,
    delta: float,
    eps: Optional[float],
    component_delta: Optional[float],
    method: Optional[str],
    step: Optional[float],
    eps0: Optional[float],
    n: Optional[float],
    kind: Optional[str],
    domain: Optional[int],
    gamma: Optional[float],
    accountant: Optional[str],
) -> str: ...
def calibrate_histogram(
    n: float, eps: float, delta: float, domain: int, accountant: str, compare: bool
) -> str: ...
def calibrate_scalar_sum(
    n: float,
    eps: float,
    delta: float,
    k: Optional[int],
    paper_domain: bool,
    accountant: str,
    compare: bool,
) -> str: ...
def calibrate_vector_sum(
    n: float,
    d: int,
    eps: float,
    delta: float,
    k: Optional[int],
    t: Optional[int],
    paper_domain: bool,
    accountant: str,
    compare: bool,
) -> str: ...

def calibrate_ikos_sum(n: float, eps: float, sigma: Optional[int], delta: Optional[float]) -> str: ...

class Histogram:
    def __init__(self, domain: int, gamma: float) -> None: ...
    @property
    def domain(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    @property
    def eps0(self) -> float: ...
    def randomize(
        self,
        values: npt.NDArray[np.uint32] | npt.NDArray[np.int64],
        simulation_seed: Optional[int],
        threads: Optional[int],
    ) -> npt.NDArray[np.uint32]: ...
    def estimate(
        self,
        messages: npt.NDArray[np.uint32] | npt.NDArray[np.int64],
        threads: Optional[int],
    ) -> npt.NDArray[np.float64]: ...
    def mean_count_variance(self, n: int) -> float: ...

class ScalarSum:
    def __init__(self, k: int, gamma: float) -> None: ...
    @property
    def k(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    @property
    def eps0(self) -> float: ...
    def randomize(
        self,
        values: npt.NDArray[np.float64],
        simulation_seed: Optional[int],
        threads: Optional[int],
    ) -> npt.NDArray[np.uint32]: ...
    def estimate(
        self,
        messages: npt.NDArray[np.uint32] | npt.NDArray[np.int64],
        threads: Optional[int],
    ) -> Tuple[float, float, int]: ...
    def worst_case_sum_mse(self, n: int) -> float: ...

class VectorSum:
    def __init__(self, d: int, t: int, k: int, gamma: float) -> None: ...
    @property
    def d(self) -> int: ...
    @property
    def t(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def gamma(self) -> float: ...
    def randomize(
        self,
        values: npt.NDArray[np.float64],
        simulation_seed: Optional[int],
        threads: Optional[int],
    ) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]: ...
    def estimate(
        self,
        coordinates: npt.NDArray[np.uint32],
        values: npt.NDArray[np.uint32],
        threads: Optional[int],
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.uint64]]: ...
    def worst_case_mean_mse(self, n: int) -> float: ...
