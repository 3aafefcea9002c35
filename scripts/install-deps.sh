#!/usr/bin/env bash
# Installs lockstep's build and test dependencies from Debian 12 packages (idempotent:
# does nothing when everything is present) and the npm tools the tests use.
# --fuzz also installs clang and its runtime libraries (libFuzzer, sanitizers) for `make fuzz`.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
fuzz=0
for arg in "$@"; do
  case "$arg" in
    --fuzz) fuzz=1 ;;
    *) echo "install-deps: unknown option $arg (known: --fuzz)" >&2; exit 2 ;;
  esac
done

packages=(
  g++ cmake ninja-build make pkg-config
  libre2-dev libutf8proc-dev nlohmann-json3-dev libsimdjson-dev tao-pegtl-dev libboost-dev libcli11-dev libfmt-dev
  libcpp-httplib-dev libtomlplusplus-dev libgtest-dev libgmock-dev libbenchmark-dev libmimalloc-dev
)
if [ "$fuzz" -eq 1 ]; then packages+=(clang libclang-rt-14-dev); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm run the ajv validator of the tests; any install of them will do (a nodejs
# package from elsewhere may bundle npm), so they are looked for as commands.
# Python 3 with venv and its C headers builds the extension module (scripts/python-env.sh
# makes the virtual environment); any install of them will do, so they are looked for.
if ! command -v python3 >/dev/null; then missing+=(python3 python3-venv python3-dev); else
  python3 -c 'import ensurepip, venv' 2>/dev/null || missing+=(python3-venv)
  python3 -c 'import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    2>/dev/null || missing+=(python3-dev)
fi
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "install-deps: need root (or sudo) to run: apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The schema-validity tests check generated JSON with ajv (the npm JSON Schema validator),
# installed into tests/node/node_modules (git-ignored), pinned by tests/node/package-lock.json.
if [ ! -f "$here/tests/node/node_modules/ajv/package.json" ] || [ ! -f "$here/tests/node/node_modules/ajv-formats/package.json" ] \
   || [ ! -f "$here/tests/node/node_modules/ajv-draft-04/package.json" ]; then
  echo "install-deps: npm install (ajv, ajv-formats, ajv-draft-04) in tests/node"
  (cd "$here/tests/node" && npm install --no-audit --no-fund --loglevel=error)
fi
