"""lockstep: grammar-constrained decoding.

Every token a model emits under lockstep keeps the output inside a JSON Schema, a tool-call
format, a regular expression or a GBNF grammar::

    import lockstep
    info = lockstep.TokenizerInfo.from_file("tokenizer.json")          # or from_huggingface(tok)
    compiler = lockstep.GrammarCompiler(info)
    grammar = compiler.compile_json_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    matcher = lockstep.GrammarMatcher(grammar)
    bitmask = lockstep.allocate_token_bitmask(1, info.vocab_size)
    while not matcher.is_terminated():
        matcher.fill_next_token_bitmask(bitmask)
        lockstep.apply_token_bitmask_inplace(logits, bitmask)         # logits: float[vocab_size]
        token = sample(logits)
        matcher.accept_token(token)

Classes (see each docstring, and lockstep/_core.pyi for signatures):

- ``TokenizerInfo``: a vocabulary as the engine sees it (exact bytes per token, special and
  stop tokens), padded to the logits width.
- ``GrammarCompiler``: compiles schemas, tools, regexes and GBNF for one TokenizerInfo and
  caches the results by canonical source.
- ``CompiledGrammar``: immutable, shared by many matchers; ``serialize()`` /
  ``GrammarCompiler.deserialize()``.
- ``GrammarMatcher``: one sequence's position: accept, rollback, fork, token bitmasks,
  jump-forward strings, speculative-draft validation.

Thread-safety: compilers and compiled grammars may be shared across threads; a matcher
belongs to one thread at a time. Calls that compute masks release the GIL;
``fill_next_token_bitmasks`` fills a batch on several threads.

Integrations: ``lockstep.hf`` (transformers logits processors), ``lockstep.vllm`` and
``lockstep.sglang`` (structured-output backends); see docs/integrations.md.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from . import errors
from ._core import (CompiledGrammar, GrammarCompiler, GrammarMatcher, TokenizerInfo, __version__,
                    fill_next_token_bitmasks)
from .bitmask import allocate_token_bitmask, apply_token_bitmask_inplace, bitmask_words
from .errors import (FileFormatError, GrammarError, LimitError, LockstepError, SchemaError,
                     TokenizerError)


def _from_huggingface(tokenizer: Any, vocab_size: Optional[int] = None,
                      stop_token_ids: Optional[Sequence[int]] = None) -> TokenizerInfo:
    """A TokenizerInfo from a Hugging Face ``transformers`` tokenizer (a fast one: lockstep
    reads its ``tokenizer.json`` through ``tokenizer.backend_tokenizer.to_str()``).

    ``vocab_size``: the model's logits width (``model.config.vocab_size``), at least the
    tokenizer's size; default ``len(tokenizer)``. ``stop_token_ids``: default the
    tokenizer's ``eos_token_id`` (pass the generation config's list when it has several).
    Raises TokenizerError when the tokenizer is not one lockstep reads (a slow tokenizer,
    a non-BPE model).
    """
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        raise TokenizerError(
            f"{type(tokenizer).__name__} has no backend_tokenizer: lockstep reads fast (tokenizers-based) "
            "Hugging Face tokenizers; load it with use_fast=True")
    if stop_token_ids is None:
        eos = getattr(tokenizer, "eos_token_id", None)
        stop_token_ids = [] if eos is None else ([eos] if isinstance(eos, int) else list(eos))
    size = len(tokenizer)
    if vocab_size is None:
        vocab_size = size
    name = getattr(tokenizer, "name_or_path", "") or "tokenizer.json"
    return TokenizerInfo.from_tokenizer_json(backend.to_str(), vocab_size=vocab_size,
                                             stop_token_ids=list(stop_token_ids), name=str(name))


TokenizerInfo.from_huggingface = staticmethod(_from_huggingface)



__all__ = [
    "TokenizerInfo", "GrammarCompiler", "CompiledGrammar", "GrammarMatcher",
    "allocate_token_bitmask", "apply_token_bitmask_inplace", "bitmask_words", "fill_next_token_bitmasks",
    "LockstepError", "GrammarError", "SchemaError", "FileFormatError", "TokenizerError", "LimitError",
    "errors", "__version__",
]
