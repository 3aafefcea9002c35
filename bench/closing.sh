#!/usr/bin/env bash
# Length-aware closing on real schemas: every output of the bundled model, at budgets from
# each schema's minimum to the minimum + 20 tokens, validated with ajv against its schema.
#   bash bench/closing.sh [MASKBENCH_DIR] [EXTRA]      (default: Github_easy, 20)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
dir="${1:-$here/../shared/schemas/jsonschemabench/Github_easy}"
extra="${2:-20}"
out=$(mktemp --suffix=.jsonl)
trap 'rm -f "$out"' EXIT
"$here/build/lockstep" bench closing "$dir" --extra "$extra" --jsonl "$out" || true
echo "ajv, each output against its own schema:"
node "$here/tests/node/validate_jsonl.js" "$out"
