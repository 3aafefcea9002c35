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
echo "== A tool call (three functions): complete within 128 tokens, forced text jump-forwarded =="
run generate --tools "$here/examples/tools/travel.json" --whitespace compact \
  --prompt "Book a room at the Grand for Anna and Ben" --seed 4 --max-tokens 128
echo "== Token healing: the prompt ends inside a word =="
run generate --prompt "Once upon a ti" --token-healing --seed 1 --max-tokens 30
