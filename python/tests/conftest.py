"""Shared fixtures: the `blanket` CLI whose --json output the package must reproduce."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
from typing import Any, Callable, Dict, List

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _cli_path() -> pathlib.Path:
    env = os.environ.get("BLANKET_CLI")
    if env:
        return pathlib.Path(env)
    built = ROOT / "target" / "debug" / "blanket"
    if not built.exists():
        subprocess.run(["cargo", "build", "--locked", "-p", "blanket-cli"], cwd=ROOT, check=True)
    return built


@pytest.fixture(scope="session")
def cli() -> Callable[..., Dict[str, Any]]:
    """Runs `blanket ARGS --json` and returns the parsed object (exit code 0, or 3 for an
    uncertified result, which still prints its JSON)."""
    path = _cli_path()
    assert path.exists(), f"the blanket CLI is not at {path} (set BLANKET_CLI)"

    def run(*args: Any, fails: bool = False) -> Dict[str, Any]:
        argv: List[str] = [str(path), "--quiet", *[str(a) for a in args], "--json"]
        p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        if fails:
            assert p.returncode not in (0, 3), f"{argv} succeeded: {p.stdout}"
            return {"stderr": p.stderr}
        assert p.returncode in (0, 3), f"{argv}: exit {p.returncode}: {p.stderr}"
        return json.loads(p.stdout)

    return run


def without_seconds(x: Any) -> Any:
    """`x` with every `seconds` key removed (wall times differ between runs)."""
    if isinstance(x, dict):
        return {k: without_seconds(v) for k, v in x.items() if k != "seconds"}
    if isinstance(x, list):
        return [without_seconds(v) for v in x]
    return x
