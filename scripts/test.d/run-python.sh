#!/usr/bin/env bash
# The Python package (python/, crate crates/blanket-py): builds the abi3 wheel with maturin
# (release profile, the workspace's target dir and Cargo.lock) into a virtual environment
# under target/pyenv (reused if present), installs it, and runs pytest (python/tests), which
# compares the package's numbers with the CLI's --json output.
#
# Needs CPython >= 3.9 with pip; installs Debian's python3-venv when `python3 -m venv`
# cannot create an environment, and pins maturin, numpy and pytest
# (python/requirements-test.txt) from PyPI.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
VENV="${BLANKET_PYENV:-target/pyenv}"

if ! command -v "${PYTHON}" >/dev/null; then
    echo "run-python: ${PYTHON} not found: installing Debian's python3" >&2
    apt-get update -qq && apt-get install -y -qq python3 python3-venv python3-pip >/dev/null
fi
if [ ! -x "${VENV}/bin/python" ] || ! "${VENV}/bin/python" -c 'import sys' 2>/dev/null; then
    rm -rf "${VENV}"
    if ! "${PYTHON}" -m venv "${VENV}" >/dev/null 2>&1; then
        echo "run-python: '${PYTHON} -m venv' failed: installing Debian's python3-venv" >&2
        rm -rf "${VENV}"
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
        "${PYTHON}" -m venv "${VENV}"
    fi
fi
# shellcheck disable=SC1091
source "${VENV}/bin/activate"
python -m pip install -q --disable-pip-version-check -r python/requirements-test.txt

# The CLI the tests compare against: the binary `cargo test --workspace` builds (test
# profile; a no-op after scripts/test's cargo test).
cargo test --workspace --locked --no-run -q
export BLANKET_CLI="${PWD}/target/debug/blanket"

rm -rf target/wheels
(cd python && maturin build --release --locked --quiet -o ../target/wheels)
python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps target/wheels/blanket-*.whl
# From the repository root, so `import blanket` is the installed wheel, not python/blanket.
python -m pytest -q -p no:cacheprovider python/tests
