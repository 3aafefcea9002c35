#!/usr/bin/env bash
# Runs the libFuzzer targets for a while each: fuzz/run.sh BUILD_DIR SECONDS [TARGET...]
# (all targets when none is named). Corpora: BUILD_DIR/corpus/<target> (scratch, grows
# from run to run) first, then fuzz/corpus/<target> (committed seeds), then — while the
# scratch corpus is empty — the shared data read in place and seeds derived from it
# (fuzz_seeds, into BUILD_DIR/seeds).
# A target keeps fuzzing after a crash, timeout or out-of-memory (fork mode); each such
# input is saved in BUILD_DIR/crashes/<target>/, and the script fails when a run added any.
# Logs: BUILD_DIR/logs/<target>.log; temporary files in BUILD_DIR/scratch/<target> during the
# run. Extra libFuzzer flags: $FUZZ_FLAGS.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
seconds=$2
shift 2
shared=$(cd "${LOCKSTEP_SHARED_DIR:-$here/../shared}" 2>/dev/null && pwd || true)
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(gbnf_fuzz regex_fuzz schema_fuzz tools_fuzz tokenizer_json_fuzz gguf_fuzz llama2c_fuzz matcher_fuzz)
fi

seeds=$build/seeds
if [ -n "$shared" ] && [ ! -f "$seeds/.done" ]; then
  rm -rf "$seeds"
  "$build/fuzz/fuzz_seeds" "$shared" "$seeds" && touch "$seeds/.done"
fi

failed=()
for t in "${targets[@]}"; do
  max_len=4096
  dirs=()
  case "$t" in
    gbnf_fuzz) dirs=("$shared/grammars/llama.cpp") ;;
    regex_fuzz) max_len=512; dirs=("$seeds/regex") ;;
    schema_fuzz) max_len=16384; dirs=("$seeds/schema") ;;
    tools_fuzz) max_len=32768; dirs=("$shared/toolcalls/mcp_tools_list_snapshots" "$seeds/tools") ;;
    tokenizer_json_fuzz) max_len=65536; dirs=("$seeds/tokenizer_json") ;;
    gguf_fuzz) max_len=65536; dirs=("$seeds/gguf") ;;
    llama2c_fuzz) max_len=65536; dirs=("$seeds/llama2c" "$shared/models/stories260K") ;;
    matcher_fuzz) max_len=512 ;;
    *) echo "fuzz: unknown target $t" >&2; exit 2 ;;
  esac
  # The seed sets are read when the scratch corpus is empty (libFuzzer keeps the seeds that
  # add coverage there): later runs do not pay for running hundreds of seeds again.
  existing=()
  if [ -z "$(ls -A "$build/corpus/$t" 2>/dev/null)" ]; then
    for d in "${dirs[@]}"; do [ -n "$shared" ] && [ -d "$d" ] && existing+=("$d"); done
  fi
  [ -d "$here/fuzz/corpus/$t" ] && existing=("$here/fuzz/corpus/$t" "${existing[@]}")
  dict=()
  [ -f "$here/fuzz/dict/$t.dict" ] && dict=("-dict=$here/fuzz/dict/$t.dict")
  mkdir -p "$build/corpus/$t" "$build/crashes/$t" "$build/logs"
  before=$(find "$build/crashes/$t" -type f ! -name 'slow-unit-*' | wc -l)
  echo "fuzz: $t for ${seconds}s"
  # Temporary files (a loader's scratch copy of the input, libFuzzer's own) go to a folder of
  # the build, removed after the run: fork mode ends its jobs without the exit handlers that
  # would remove a scratch folder in /tmp.
  scratch="$build/scratch/$t"
  rm -rf "$scratch" && mkdir -p "$scratch"
  # shellcheck disable=SC2086
  TMPDIR="$scratch" "$build/fuzz/$t" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
    -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len="$max_len" \
    -artifact_prefix="$build/crashes/$t/" -print_final_stats=1 "${dict[@]}" ${FUZZ_FLAGS:-} \
    "$build/corpus/$t" "${existing[@]}" > "$build/logs/$t.log" 2>&1
  status=$?
  rm -rf "$scratch"
  after=$(find "$build/crashes/$t" -type f ! -name 'slow-unit-*' | wc -l)
  grep -E '^#[0-9]+: cov:' "$build/logs/$t.log" | tail -1 | sed "s/^/fuzz: $t /"
  if [ "$after" -gt "$before" ] || [ $status -ne 0 ]; then
    echo "fuzz: $t: $((after - before)) new crashing inputs in $build/crashes/$t (exit $status; log $build/logs/$t.log)"
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: no findings"
