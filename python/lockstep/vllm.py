"""vLLM integration: a structured-output backend with vLLM's v1 interface.

``LockstepBackend`` and ``LockstepGrammar`` subclass vLLM's own
``vllm.v1.structured_output.backend_types.StructuredOutputBackend`` and
``StructuredOutputGrammar`` and implement every abstract method with the signatures of the
installed vLLM: ``compile_grammar(request_type, grammar_spec, stop_token_ids=None)``,
``allocate_token_bitmask(max_num_seqs)``, ``destroy()``; ``accept_tokens(request_id,
tokens)``, ``validate_tokens(tokens)``, ``rollback(num_tokens)``, ``fill_bitmask(bitmask,
batch_index)``, ``is_terminated()``, ``reset()``. Bitmasks are vLLM's (XGrammar's) int32
layout, so vLLM's own apply path masks the logits.

vLLM picks its backend by name inside ``StructuredOutputManager.grammar_init`` and its
configuration accepts only its own names, so lockstep takes one of them over:
``LOCKSTEP_VLLM_BACKEND=guidance vllm serve ... --structured-outputs-config.backend guidance``
(lockstep's vLLM plug-in, an entry point vLLM loads in each of its processes, reads the
variable), or ``install("guidance")`` in the engine's process (docs/integrations.md).

Request kinds: JSON (a schema), JSON_OBJECT (any object), REGEX, GRAMMAR (GBNF), CHOICE
(a list of strings, as JSON) — STRUCTURAL_TAG is not supported (ValueError).
``stop_token_ids`` (the request's EOS and stop ids) are allowed exactly where the grammar's
output is complete and end it, like the vocabulary's own stop tokens.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import torch
from vllm.v1.structured_output.backend_types import (StructuredOutputBackend, StructuredOutputGrammar,
                                                     StructuredOutputOptions)

from . import CompiledGrammar, GrammarCompiler, GrammarMatcher, TokenizerInfo, allocate_token_bitmask


@dataclass
class LockstepGrammar(StructuredOutputGrammar):
    """One request's matcher. ``extra_stop_ids``: stop ids beyond the vocabulary's own."""

    matcher: GrammarMatcher = field(hash=False)
    vocab_size: int
    extra_stop_ids: frozenset = frozenset()
    num_processed_tokens: int = field(default=0, init=False, repr=False)
    # Steps (accepted tokens) at which an extra stop id ended the output, for rollback.
    _extra_stop_at: Optional[int] = field(default=None, init=False, repr=False)

    def _terminated(self) -> bool:
        return self._extra_stop_at is not None or self.matcher.is_terminated()

    def _accept(self, token: int) -> bool:
        if token in self.extra_stop_ids:
            if not self.matcher.is_accepting():
                return False
            self._extra_stop_at = self.num_processed_tokens
            return True
        return self.matcher.accept_token(token)

    def accept_tokens(self, request_id: str, tokens: list[int]) -> bool:
        """Advances by ``tokens``; tokens after the end are ignored. False when the grammar
        rejects one (the ones before it stay accepted, as in vLLM's other backends)."""
        for token in tokens:
            if self._terminated():
                return True
            if not self._accept(int(token)):
                return False
            self.num_processed_tokens += 1
        return True

    def validate_tokens(self, tokens: list[int]) -> list[int]:
        """The longest prefix of ``tokens`` the grammar accepts; the state is unchanged."""
        if self._terminated():
            return []
        accepted: list[int] = []
        for token in tokens:
            if not self._accept(int(token)):
                break
            accepted.append(int(token))
            self.num_processed_tokens += 1
            if self._terminated():
                break
        if accepted:
            self.rollback(len(accepted))
        return accepted

    def rollback(self, num_tokens: int) -> None:
        """Undoes the last ``num_tokens`` accepted tokens (an extra stop id included)."""
        if num_tokens <= 0:
            return
        if self._extra_stop_at is not None and self._extra_stop_at >= self.num_processed_tokens - num_tokens:
            self._extra_stop_at = None
            self.matcher.rollback(num_tokens - 1)
        else:
            self.matcher.rollback(num_tokens)
        self.num_processed_tokens -= num_tokens

    def fill_bitmask(self, bitmask: "torch.Tensor", batch_index: int) -> None:
        """Row ``batch_index`` of ``bitmask`` (int32[max_num_seqs, ceil(vocab_size / 32)])."""
        self.matcher.fill_next_token_bitmask(bitmask, batch_index)
        if self.extra_stop_ids and self.matcher.is_accepting():
            row = bitmask[batch_index]
            for t in self.extra_stop_ids:
                if t < self.vocab_size:
                    row[t >> 5] |= _bit(t & 31)

    def is_terminated(self) -> bool:
        return self._terminated()

    def reset(self) -> None:
        self.matcher.reset()
        self.num_processed_tokens = 0
        self._extra_stop_at = None


def _bit(i: int) -> int:
    """Bit i of an int32 word, as a signed int32 value."""
    return (1 << i) - (1 << 32) if i == 31 else 1 << i


@dataclass
class LockstepBackend(StructuredOutputBackend):
    """The engine-level backend: one GrammarCompiler (and its cache) for the model's
    tokenizer, padded to ``vocab_size`` (the model's logits width)."""

    compiler: Optional[GrammarCompiler] = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        info = TokenizerInfo.from_huggingface(self.tokenizer, vocab_size=self.vocab_size)
        disable_ws = False
        cfg = getattr(self.vllm_config, "structured_outputs_config", None)
        if cfg is not None:
            disable_ws = bool(getattr(cfg, "disable_any_whitespace", False))
        self.whitespace = "compact" if disable_ws else "flexible"
        self.compiler = GrammarCompiler(info)

    def _compile(self, request_type: StructuredOutputOptions, spec: str) -> CompiledGrammar:
        c = self.compiler
        if request_type == StructuredOutputOptions.JSON:
            return c.compile_json_schema(spec, whitespace=self.whitespace)
        if request_type == StructuredOutputOptions.JSON_OBJECT:
            return c.compile_json_schema('{"type": "object"}', whitespace=self.whitespace)
        if request_type == StructuredOutputOptions.REGEX:
            return c.compile_regex(spec)
        if request_type == StructuredOutputOptions.GRAMMAR:
            return c.compile_grammar(spec)
        if request_type == StructuredOutputOptions.CHOICE:
            choices = json.loads(spec) if isinstance(spec, str) else spec
            return c.compile_regex("|".join(re.escape(str(x)) for x in choices))
        raise ValueError(f"lockstep does not support {request_type!s} requests")

    def compile_grammar(self, request_type: StructuredOutputOptions, grammar_spec: str,
                        stop_token_ids: set[int] | None = None) -> StructuredOutputGrammar:
        grammar = self._compile(request_type, grammar_spec)
        own = set(grammar.tokenizer_info.stop_token_ids)
        extra = frozenset(int(t) for t in (stop_token_ids or ()) if int(t) not in own)
        return LockstepGrammar(matcher=GrammarMatcher(grammar), vocab_size=self.vocab_size, extra_stop_ids=extra)

    def allocate_token_bitmask(self, max_num_seqs: int) -> "torch.Tensor":
        return allocate_token_bitmask(max_num_seqs, self.vocab_size, backend="torch")

    def destroy(self) -> None:
        if self.compiler is not None:
            self.compiler.clear_cache()
        self.compiler = None


_REPLACEABLE = {"xgrammar": "XgrammarBackend", "guidance": "GuidanceBackend"}


def install(replaces: str = "guidance") -> None:
    """Makes vLLM's structured-output manager, in this process, build a LockstepBackend
    where it would build the backend named ``replaces`` ("guidance" or "xgrammar"). vLLM's
    configuration accepts only its own backend names, so lockstep runs under one of them:
    start vLLM with ``--structured-outputs-config.backend guidance`` (the request checks
    vLLM makes for that name still run first). Idempotent."""
    from vllm.v1 import structured_output as so

    if replaces not in _REPLACEABLE:
        raise ValueError(f"replaces must be one of {sorted(_REPLACEABLE)}, not {replaces!r}")
    setattr(so, _REPLACEABLE[replaces], LockstepBackend)


def _plugin() -> None:
    """vLLM general plug-in (entry point ``vllm.general_plugins``), run by vLLM in every
    process it starts: installs lockstep when ``LOCKSTEP_VLLM_BACKEND`` names the backend to
    replace, and does nothing otherwise."""
    import os

    name = os.environ.get("LOCKSTEP_VLLM_BACKEND")
    if name:
        install(name)


__all__ = ["LockstepBackend", "LockstepGrammar", "install"]
