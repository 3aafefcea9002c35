#!/usr/bin/env bash
# The main job on the bundled model: the model alone, then under grammars.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lockstep="${1:-$here/build}/lockstep"
g="$here/examples/grammars"
stats=$(mktemp)
trap 'rm -f "$stats"' EXIT
run() {
  echo "\$ lockstep $*"
  "$lockstep" "$@" 2>"$stats"
  echo
  cat "$stats"
  echo
}
echo "== The bundled model (stories260K), greedy: the same text as llama2.c =="
run generate --temperature 0 --max-tokens 60
echo "== Under a GBNF grammar: a shopping list =="
run generate --grammar "$g/shopping-list.gbnf" --prompt "Mom said: we need food." --seed 3
echo "== Under a GBNF grammar: a JSON character card =="
run generate --grammar "$g/character.gbnf" --prompt "Once upon a time" --seed 1
echo "== Under a GBNF grammar: a JSON object, 64 tokens =="
run generate --grammar "$g/json.gbnf" --prompt "Once upon a time" --seed 2 --max-tokens 64
