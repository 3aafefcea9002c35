#!/usr/bin/env bash
# Creates (or updates) one of the project's Python virtual environments (git-ignored) from
# PyPI and prints its python's path:
#   (no option)    .venv          python/requirements-test.txt: the extension module's build
#                                 and the pytest suite (`make test`)
#   --for NAME     .venv-NAME     python/requirements-NAME.txt: vllm (vLLM, transformers, torch)
#                                 or sglang, for `make test-integrations`;
#                                 compare: bench/compare/requirements.txt, for `make compare`
# Idempotent: does nothing when the requirements file has not changed since the last run.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
venv="$here/.venv"
reqs=("$here/python/requirements-test.txt")
if [ $# -gt 0 ]; then
  file="$here/python/requirements-${2:-}.txt"
  [ "${2:-}" = compare ] && file="$here/bench/compare/requirements.txt"
  if [ "$1" != "--for" ] || [ $# -ne 2 ] || [ ! -f "$file" ]; then
    echo "python-env: usage: python-env.sh [--for vllm|sglang|compare]" >&2
    exit 2
  fi
  venv="$here/.venv-$2"
  reqs=("$file")
fi
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
