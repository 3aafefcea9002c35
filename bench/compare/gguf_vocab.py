#!/usr/bin/env python3
"""Writes a vocabulary-only GGUF (what llama.cpp loads with vocab_only) from a Hugging Face
byte-level BPE tokenizer.json, for bench/compare's llama.cpp engine.

Usage: gguf_vocab.py TOKENIZER_JSON OUT_GGUF

The tokens, their types (special added tokens are control tokens) and the merges come from
tokenizer.json; the pre-tokenizer is llama.cpp's "llama-bpe" (Llama 3). A llama model's
hyper-parameters are written with placeholder sizes: llama.cpp reads them before it sees
vocab_only, and no tensor is loaded.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import gguf


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, target = Path(sys.argv[1]), Path(sys.argv[2])
    spec = json.loads(source.read_text(encoding="utf-8"))
    vocab: dict[str, int] = dict(spec["model"]["vocab"])
    special = set()
    for t in spec.get("added_tokens", []):
        vocab[t["content"]] = t["id"]
        if t.get("special"):
            special.add(t["id"])
    size = max(vocab.values()) + 1
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [gguf.TokenType.UNUSED] * size
    for text, i in vocab.items():
        tokens[i] = text
        types[i] = gguf.TokenType.CONTROL if i in special else gguf.TokenType.NORMAL
    merges = [m if isinstance(m, str) else " ".join(m) for m in spec["model"]["merges"]]

    target.parent.mkdir(parents=True, exist_ok=True)
    w = gguf.GGUFWriter(str(target), "llama")
    w.add_name("Llama 3 vocabulary (vocab only)")
    w.add_vocab_size(size)
    w.add_context_length(8192)
    w.add_embedding_length(64)
    w.add_block_count(1)
    w.add_feed_forward_length(64)
    w.add_head_count(1)
    w.add_head_count_kv(1)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("llama-bpe")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(vocab.get("<|begin_of_text|>", 0))
    w.add_eos_token_id(vocab.get("<|end_of_text|>", 0))
    w.add_add_bos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(f"gguf_vocab: {target}: {size} tokens, {len(merges)} merges", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
