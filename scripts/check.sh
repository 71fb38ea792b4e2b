#!/usr/bin/env bash
# Set up one virtualenv per supported Python and run every check: ruff, mypy --strict,
# the test suite on 3.10, 3.11, 3.12 and 3.13 (its slow and releases tiers, which build wheels
# and venvs or read released sources, on 3.11 only), the opt-in integration suite (real Ray
# and torch on the CPU) once on 3.11, and a smoke run of the benchmarks. The suites run on
# every core (pytest-xdist, -n auto); the integration suite, which starts Ray, runs alone.
#   scripts/check.sh            everything
#   scripts/check.sh --quick    lint, types and tests on Python 3.11 only
set -euo pipefail
cd "$(dirname "$0")/.."

quick=0
[ "${1:-}" = "--quick" ] && quick=1
versions=(3.11 3.10 3.12 3.13)  # the first one also runs ruff and mypy
[ "$quick" = 1 ] && versions=(3.11)

find_python() {  # find_python 3.12 -> path of a python3.12 interpreter
    local v=$1 p
    for p in "python$v" "$(pyenv root 2>/dev/null)/versions/$v"*/bin/"python$v"; do
        if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sys' >/dev/null 2>&1; then
            command -v "$p"
            return 0
        fi
    done
    return 1
}

venv_for() {  # venv_for 3.12 -> .venvs/py3.12 with errhints (editable) and the dev tools
    local v=$1 py dir=".venvs/py$1"
    py=$(find_python "$v") || { echo "python$v not found" >&2; return 1; }
    if [ ! -x "$dir/bin/python" ]; then
        "$py" -m venv "$dir"
        "$dir/bin/python" -m pip install -q --upgrade pip
    fi
    "$dir/bin/python" -m pip install -q -e '.[dev]'
    echo "$dir"
}

first=""
for v in "${versions[@]}"; do
    dir=$(venv_for "$v")
    [ -z "$first" ] && first=$dir
    if [ "$dir" = "$first" ]; then
        echo "== ruff"
        "$dir/bin/ruff" check src tests benchmarks examples scripts hatch_build.py
        "$dir/bin/ruff" format --check src tests benchmarks examples scripts hatch_build.py
        echo "== mypy --strict"
        "$dir/bin/mypy" src/errhints
    fi
    if [ "$dir" = "$first" ]; then
        echo "== tests on Python $v"
        "$dir/bin/python" -m pytest -q -p no:cacheprovider -n auto tests
    else  # wheels, fresh venvs and released sources are Python-independent: checked once
        echo "== tests on Python $v (without the slow and releases tiers, run on $first)"
        "$dir/bin/python" -m pytest -q -p no:cacheprovider -n auto -m "not slow and not releases" tests
    fi
done

integration_venv() {  # .venvs/integration: Python 3.11, torch 2.13.0 (CPU), ray, errhints
    local py dir=".venvs/integration"
    py=$(find_python 3.11) || return 1
    if [ ! -x "$dir/bin/python" ]; then
        "$py" -m venv "$dir" || return 1
        "$dir/bin/python" -m pip install -q --upgrade pip || return 1
    fi
    "$dir/bin/python" -c 'import torch, ray' >/dev/null 2>&1 ||
        "$dir/bin/python" -m pip install -q torch==2.13.0 ray || return 1
    "$dir/bin/python" -m pip install -q -e '.[test]' || return 1
    echo "$dir"
}

if [ "$quick" = 0 ]; then
    # The benchmarks run before the integration suite: right after Ray and torch the machine
    # is still busy with their memory, and a fresh process's first explain measured 54 ms
    # there against 33 ms on the same checkout a minute later.
    echo "== benchmarks (smoke)"
    "$first/bin/python" benchmarks/run.py --smoke
    echo "== integration suite (real Ray and torch, CPU) on Python 3.11"
    if idir=$(integration_venv); then
        "$idir/bin/python" -m pytest -q -p no:cacheprovider -m integration tests
    else
        echo "skipped: the integration venv (torch==2.13.0, ray) could not be built here"
    fi
fi
