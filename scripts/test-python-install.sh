#!/usr/bin/env bash
# `pip install .` in a fresh virtual environment, then `python -c "import lockstep"` and the
# pytest suite against the installed package (not the build tree): what a user of the
# Python package does. Takes a few minutes: pip builds the whole engine (Release).
# usage: test-python-install.sh [VENV_DIR]   (default build-wheel/venv, recreated)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="${1:-$here/build-wheel/venv}"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
echo "test-python-install: pip install $here (builds lockstep._core)" >&2
start=$(date +%s)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$here"
echo "test-python-install: installed in $(( $(date +%s) - start )) s" >&2
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/python/requirements-test.txt"
cd "$(mktemp -d)"
"$venv/bin/python" -c "import lockstep, sys; print('lockstep', lockstep.__version__, 'from', lockstep.__file__); assert '$here/python' not in lockstep.__file__"
LOCKSTEP_SHARED_DIR="${LOCKSTEP_SHARED_DIR:-$here/../shared}" "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/python/tests"
