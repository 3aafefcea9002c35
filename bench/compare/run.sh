#!/usr/bin/env bash
# `make compare`: makes .venv-compare (bench/compare/requirements.txt: XGrammar, llguidance,
# outlines-core, llama-cpp-python, from PyPI), installs lockstep into it from this repository
# (pip install ., rebuilt incrementally in build/compare/wheel), then runs bench/compare/run.py
# with the arguments given (run.py --help).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
python=$(bash "$here/scripts/python-env.sh" --for compare)
echo "compare: pip install $here into ${python%/bin/python}" >&2
"$python" -m pip install --quiet --disable-pip-version-check \
  --config-settings=build-dir="$here/build/compare/wheel" "$here"
exec "$python" "$here/bench/compare/run.py" "$@"
