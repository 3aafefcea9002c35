#!/usr/bin/env bash
# The C API against an installed copy: `cmake --install` (component dev) into a temporary
# prefix, examples/c/constrain.c built once with `pkg-config --cflags --libs lockstep` and
# once through find_package(lockstep), then run on the bundled model's vocabulary: outputs
# must match the regex / validate against the schema (Python's re and jsonschema), checks
# must accept and reject the right texts, and errors must carry their location.
# usage: run.sh BUILD_DIR SOURCE_DIR SHARED_DIR PYTHON
set -euo pipefail
build=$1 src=$2 shared=$3 python=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "c_api: FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" --component dev >/dev/null
pc=$(dirname "$(find "$tmp/prefix" -name lockstep.pc | head -1)")
[ -f "$pc/lockstep.pc" ] || fail "no lockstep.pc installed"
[ -f "$tmp/prefix/include/lockstep/lockstep.h" ] || fail "no lockstep/lockstep.h installed"
flags=$(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs lockstep)
cc -std=c99 -Wall -Wextra -Werror -pedantic "$src/examples/c/constrain.c" $flags -o "$tmp/constrain"

cmake -S "$src/tests/c_api/consumer" -B "$tmp/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DEXAMPLE="$src/examples/c/constrain.c" >/dev/null
cmake --build "$tmp/consumer" >/dev/null
[ -x "$tmp/consumer/constrain" ] || fail "find_package(lockstep) build made no program"

tok="$shared/models/stories260K/tok512.bin"
for prog in "$tmp/constrain" "$tmp/consumer/constrain"; do
  regex='(once|upon|a|time)( (once|upon|a|time)){2,5}\.'
  out=$("$prog" "$tok" --regex "$regex" --max-tokens 24)
  "$python" -c 'import re, sys; sys.exit(0 if re.fullmatch(sys.argv[1], sys.argv[2]) else 1)' "$regex" "$out" \
    || fail "regex output '$out' does not match"

  cat > "$tmp/schema.json" <<'JSON'
{"type": "object", "properties": {"name": {"type": "string", "maxLength": 6}, "n": {"type": "integer", "minimum": 3}},
 "required": ["name", "n"], "additionalProperties": false}
JSON
  out=$("$prog" "$tok" --schema "$tmp/schema.json" --max-tokens 40)
  "$python" -c 'import json, sys, jsonschema; jsonschema.validate(json.loads(sys.argv[2]), json.load(open(sys.argv[1])))' \
    "$tmp/schema.json" "$out" || fail "schema output '$out' does not validate"

  [ "$("$prog" "$tok" --schema "$tmp/schema.json" --check '{"name":"Lily","n":12}')" = "accepted" ] \
    || fail "a valid document was not accepted"
  set +e
  msg=$("$prog" "$tok" --schema "$tmp/schema.json" --check '{"name":"Lily","n":1,"x":2}')
  code=$?
  set -e
  [ "$code" -eq 1 ] && [[ "$msg" == *"is not allowed"* ]] || fail "an invalid document: exit $code, '$msg'"

  set +e
  msg=$("$prog" "$tok" --regex 'a(b' 2>&1)
  code=$?
  set -e
  [ "$code" -eq 2 ] && [[ "$msg" == *"column"* ]] || fail "a bad regex: exit $code, '$msg'"
done
echo "c_api: ok (pkg-config and find_package builds; regex, schema, check and error cases)"
