#!/usr/bin/env bash
# `lockstep fuzz` over real grammars and schemas: every llama.cpp grammar against the Llama 3,
# Qwen 3, GPT-2 and Llama 2 vocabularies, and the first N schemas of a JSONSchemaBench split
# against Llama 3 (each file's "schema" member, written to OUT_DIR/schemas/; finished walks
# re-checked by ajv as well). One JSON report per run in OUT_DIR, and a summary line per run.
#   bash bench/fuzz_real.sh [OUT_DIR] [TIME_LIMIT] [N_SCHEMAS] [SCHEMA_DIR]
# LOCKSTEP_BIN: the binary; PARTS="grammars schemas" (the default) or either one; JOBS:
# schema runs in parallel.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
shared="$here/../shared"
out="${1:-$(mktemp -d)}"
limit="${2:-60}"
n_schemas="${3:-200}"
schema_dir="${4:-$shared/schemas/jsonschemabench/Github_easy}"
bin="${LOCKSTEP_BIN:-$here/build/lockstep}"
mkdir -p "$out"
vocabs=(llama3:"$shared/vocab/llama3-hf/tokenizer.json" qwen3:"$shared/vocab/qwen3-hf/tokenizer.json"
        gpt2:"$shared/vocab/gpt2/encoder.json" llama2:"$shared/vocab/llama2/tokenizer.bin")
summary() {  # name, exit code, report
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
name, rc, path = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    r = json.load(open(path))
except Exception:
    print(f"{name}: exit {rc}, no report"); sys.exit()
print(f"{name}: exit {rc}, {r['seconds']:.1f} s, walks {r['walks']} ({r['finished_walks']} finished), "
      f"configs {r['configurations']}{' (all)' if r['exhaustive'] else ''}, dead ends {len(r['dead_ends'])}, "
      f"eog traps {len(r['eog_traps'])}, unreachable {len(r['unreachable_rules'])}, "
      f"unproductive {len(r['unproductive_rules'])}, never allowed {r['never_allowed_tokens']['count']}"
      f"{' (exact)' if r['never_allowed_tokens']['exact'] else ''}, non-canonical {len(r['non_canonical']['refused'])}, "
      f"disagreements {len(r['disagreements'])}{' (no ajv: ' + r['ajv_skipped'] + ')' if r.get('ajv_skipped') else ''}")
PY
}
parts="${PARTS:-grammars schemas}"
[[ " $parts " == *" grammars "* ]] && for g in "$shared"/grammars/llama.cpp/*.gbnf; do
  for v in "${vocabs[@]}"; do
    name="$(basename "$g" .gbnf)@${v%%:*}"
    "$bin" fuzz --grammar "$g" --tokenizer "${v#*:}" --time-limit "$limit" --json \
      >"$out/$name.json" 2>"$out/$name.err"
    summary "$name" $? "$out/$name.json"
  done
done
[[ " $parts " == *" schemas "* ]] || exit 0
mkdir -p "$out/schemas"
fuzz_schema() {  # one JSONSchemaBench file
  local file=$1 name s
  name="schema-$(basename "$file" .json)"
  s="$out/schemas/$(basename "$file")"
  python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))["schema"], open(sys.argv[2], "w"))' "$file" "$s"
  local t0=$SECONDS rc
  "$bin" fuzz --schema "$s" --tokenizer "${vocabs[0]#*:}" --time-limit "$limit" --json \
    >"$out/$name.json" 2>"$out/$name.err"
  rc=$?
  summary "$name" $rc "$out/$name.json" | sed "s/\$/, wall $((SECONDS - t0)) s/"
}
export -f fuzz_schema summary
export out bin limit
export vocab0="${vocabs[0]#*:}"
# JOBS runs in parallel (default 1: each run's --time-limit is then its own).
ls "$schema_dir"/*.json 2>/dev/null | head -n "$n_schemas" |
  xargs -P "${JOBS:-1}" -I{} bash -c 'vocabs=("x:$vocab0"); fuzz_schema "$1"' _ {}
