#!/usr/bin/env bash
# Makes sure the bundled model (karpathy's tinyllamas stories260K: stories260K.bin +
# tok512.bin) is where `lockstep` looks for it. It is used in place when present in
# ../shared/models/stories260K or $LOCKSTEP_MODEL_DIR; otherwise it is downloaded from its
# public origin into $LOCKSTEP_MODEL_DIR (default ~/.cache/lockstep/stories260K).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
origin="https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K"
declare -A sha=(
  [stories260K.bin]=b0a507e7ad0f626624f17112325e66691f9076d622e1d3274d103d00299f2696
  [tok512.bin]=037cb335abb25d1fa9e8ecae30ed2a3a8ace9302862ebcdc05d51a6bbb10c312
)
candidates=("$here/../shared/models/stories260K")
if [ -n "${LOCKSTEP_MODEL_DIR:-}" ]; then
  candidates+=("$LOCKSTEP_MODEL_DIR" "$LOCKSTEP_MODEL_DIR/stories260K")
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/lockstep/stories260K"
candidates+=("$cache")
for d in "${candidates[@]}"; do
  if [ -f "$d/stories260K.bin" ] && [ -f "$d/tok512.bin" ]; then
    echo "fetch-model: bundled model found in $(cd "$d" && pwd)"
    exit 0
  fi
done
dest="${LOCKSTEP_MODEL_DIR:-$cache}"
echo "fetch-model: stories260K not found in ${candidates[*]}"
echo "fetch-model: downloading it from $origin into $dest"
mkdir -p "$dest"
for f in stories260K.bin tok512.bin; do
  if ! curl -fL --retry 2 -o "$dest/$f.part" "$origin/$f"; then
    echo "fetch-model: download failed. Put stories260K.bin and tok512.bin (from $origin)" \
         "into $dest or into \$LOCKSTEP_MODEL_DIR yourself." >&2
    exit 1
  fi
  echo "${sha[$f]}  $dest/$f.part" | sha256sum -c --quiet - || {
    echo "fetch-model: $f does not have the expected sha256 ${sha[$f]}" >&2
    exit 1
  }
  mv "$dest/$f.part" "$dest/$f"
done
echo "fetch-model: done"
