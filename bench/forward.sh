#!/usr/bin/env bash
# The forward pass (docs/forward.md), two measurements:
#  1. lockstep against llama2.c's run.c on the bundled stories260K: greedy, one thread, the
#     programs run alternately RUNS times; tokens/s as each reports it (wall clock) and from
#     CPU time (steady on a busy machine); medians, and medians of the per-round ratios.
#  2. --threads 1 against 2 (THREADS) on a larger random-weight llama GGUF that
#     `lockstep convert --random-llama` writes once (RANDOM_GGUF, never committed).
#   bash bench/forward.sh [RUNS] [STEPS]        (default: 9 rounds, 256 positions)
# LLAMA2C_RUN: run.c built as `gcc -Ofast -march=native run.c -lm -o run` (github.com/karpathy/
#   llama2.c; not part of lockstep); part 1 is skipped without it.
# LOCKSTEP_BINS: the lockstep binaries to time, space-separated (default: build/lockstep, and
#   build-native/lockstep — cmake -DLOCKSTEP_NATIVE=ON — when it exists).
# RANDOM_SHAPE (default dim=768,hidden=2048,layers=8,heads=12,kv_heads=4,context=1024),
# RANDOM_STEPS (default 64 tokens), THREADS (default "1 2"), PARTS ("runc threads", the default,
# or either one).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
runs="${1:-9}"
steps="${2:-256}"
model_dir="${LOCKSTEP_MODEL_DIR:-$here/../shared/models/stories260K}"
bins="${LOCKSTEP_BINS:-$here/build/lockstep$([[ -x $here/build-native/lockstep ]] && echo " $here/build-native/lockstep" || true)}"
shape="${RANDOM_SHAPE:-dim=768,hidden=2048,layers=8,heads=12,kv_heads=4,context=1024}"
gguf="${RANDOM_GGUF:-$here/build/random-llama-${shape//[=,]/_}.gguf}"
parts="${PARTS:-runc threads}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Runs a command (stdout to $tmp/out, stderr to $tmp/err) and prints its CPU seconds (user +
# system, from wait4: exact, unlike the wall clock of a busy machine).
cpu_run() {
  python3 - "$@" <<'PY'
import os, subprocess, sys
with open(os.environ["TMPD"] + "/out", "wb") as out, open(os.environ["TMPD"] + "/err", "wb") as err:
    p = subprocess.Popen(sys.argv[1:], stdout=out, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
print(f"{ru.ru_utime + ru.ru_stime:.6f}")
PY
}
export TMPD=$tmp
# tokens/s a run reported: run.c's "achieved tok/s", lockstep's --json tokens_per_second
reported_runc() { sed -n 's/^achieved tok\/s: //p' "$tmp/err"; }
reported_lockstep() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tokens_per_second"])' "$tmp/out"; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratios() { paste <(tr ' ' '\n' <<<"$1" | grep .) <(tr ' ' '\n' <<<"$2" | grep .) | awk '{ printf "%s ", $1 / $2 }'; }
label() { local b=$1; echo "${b#"$here"/}"; }

if [[ " $parts " == *" runc "* ]]; then
  have_runc=""
  if [[ -n "${LLAMA2C_RUN:-}" && -x "${LLAMA2C_RUN}" ]]; then
    have_runc=1
  else
    echo "run.c: skipped (set LLAMA2C_RUN to run.c built with gcc -Ofast -march=native run.c -lm -o run)"
  fi
  echo "== stories260K, greedy, one thread, $steps positions, $runs rounds (run.c, then each lockstep binary)"
  echo "   wall: tokens/s as the program reports it; cpu: $((steps - 2)) tokens / (CPU seconds of the run - of a 2-position run)"
  declare -A wall cpu
  names=()
  [[ -n $have_runc ]] && names+=(runc)
  names+=($bins)
  for ((r = 1; r <= runs; r++)); do
    line="round $r"
    for b in "${names[@]}"; do
      if [[ $b == runc ]]; then
        c0=$(cpu_run "$LLAMA2C_RUN" "$model_dir/stories260K.bin" -z "$model_dir/tok512.bin" -t 0 -n 2)
        c=$(cpu_run "$LLAMA2C_RUN" "$model_dir/stories260K.bin" -z "$model_dir/tok512.bin" -t 0 -n "$steps")
        w=$(reported_runc)
      else
        c0=$(cpu_run "$b" generate -m "$model_dir" --temperature 0 --threads 1 -n 1 --json)
        c=$(cpu_run "$b" generate -m "$model_dir" --temperature 0 --threads 1 -n $((steps - 1)) --json)
        w=$(reported_lockstep)
      fi
      k=$(awk -v n=$((steps - 2)) -v a="$c" -v z="$c0" 'BEGIN { printf "%.1f", n / (a - z) }')
      wall[$b]+="$w "
      cpu[$b]+="$k "
      line+=" | $([[ $b == runc ]] && echo run.c || label "$b") wall $(printf %.0f "$w") cpu $(printf %.0f "$k")"
    done
    echo "$line"
  done
  for b in "${names[@]}"; do
    msg="$([[ $b == runc ]] && echo "run.c -Ofast -march=native" || label "$b"): median wall $(printf %.0f "$(median <<<"${wall[$b]}")"), cpu $(printf %.0f "$(median <<<"${cpu[$b]}")") tokens/s"
    if [[ $b != runc && -n $have_runc ]]; then  # per-round ratios: each pair ran back to back
      msg+="; ratio to run.c: wall $(ratios "${wall[$b]}" "${wall[runc]}" | median), cpu $(ratios "${cpu[$b]}" "${cpu[runc]}" | median)"
    fi
    echo "$msg"
  done
fi

if [[ " $parts " == *" threads "* ]]; then
  bin="${bins##* }"  # the last binary: the native build when there is one
  rsteps="${RANDOM_STEPS:-64}"
  threads="${THREADS:-1 2}"
  if [[ ! -f "$gguf" ]]; then
    echo "writing $gguf (random weights, $shape)"
    "$bin" convert --random-llama "$shape" --tokenizer "$model_dir/tok512.bin" -o "$gguf" 2>/dev/null
  fi
  echo "== $(basename "$gguf") ($(du -m "$gguf" | cut -f1) MB), $(label "$bin"), greedy, $rsteps tokens, $runs rounds"
  declare -A ttps
  for ((r = 1; r <= runs; r++)); do
    line="round $r"
    for t in $threads; do
      # end-of-generation ids banned: a random model would stop anywhere
      cpu_run "$bin" generate -m "$gguf" --temperature 0 --json -n "$rsteps" --threads "$t" \
        --logit-bias 1=-inf --logit-bias 2=-inf >/dev/null
      v=$(reported_lockstep)
      ttps[$t]+="$v "
      line+=" | --threads $t: $(printf %.1f "$v")"
    done
    echo "$line"
  done
  first="${threads%% *}"
  m1=$(median <<<"${ttps[$first]}")
  for t in $threads; do
    m=$(median <<<"${ttps[$t]}")
    echo "--threads $t: median $(printf %.1f "$m") tokens/s ($(awk -v a="$m" -v b="$m1" 'BEGIN { printf "%.2f", a / b }')× --threads $first)"
  done
fi
