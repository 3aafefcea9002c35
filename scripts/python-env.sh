#!/usr/bin/env bash
# Creates (or updates) the project's Python virtual environment, .venv at the repository root
# (git-ignored), with the packages of python/requirements-test.txt from PyPI: what the
# extension module's build and the pytest suite need. Idempotent: does nothing when the
# requirements file has not changed since the last run. Prints the venv's python path last.
# --integrations also installs python/requirements-integrations.txt (torch, transformers,
# vllm, ...) for `make test-integrations`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="${LOCKSTEP_VENV:-$here/.venv}"
reqs=("$here/python/requirements-test.txt")
for arg in "$@"; do
  case "$arg" in
    --integrations) reqs+=("$here/python/requirements-integrations.txt") ;;
    *) echo "python-env: unknown option $arg (known: --integrations)" >&2; exit 2 ;;
  esac
done
python="${PYTHON:-python3}"
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
  echo "python-env: needs Python 3.9 or newer as $python" >&2
  exit 1
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "python-env: creating $venv" >&2
  if ! "$python" -m venv "$venv" 2>/dev/null; then
    echo "python-env: '$python -m venv' failed; on Debian install python3-venv (apt-get install python3-venv)" >&2
    exit 1
  fi
fi
stamp="$venv/.lockstep-requirements"
want=$(cat "${reqs[@]}" | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "python-env: pip install -r ${reqs[*]##*/}" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  for r in "${reqs[@]}"; do "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$r" >&2; done
  echo "$want" > "$stamp"
fi
echo "$venv/bin/python"
