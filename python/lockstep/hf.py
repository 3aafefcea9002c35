"""Hugging Face transformers integration: logits processors for ``model.generate``.

    from transformers import AutoModelForCausalLM, AutoTokenizer
    import lockstep.hf

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    proc = lockstep.hf.JsonSchemaLogitsProcessor(schema, tok, vocab_size=model.config.vocab_size)
    out = model.generate(**tok(prompt, return_tensors="pt"), logits_processor=[proc],
                         max_new_tokens=128)

Each row of the batch (each beam, each returned sequence) follows the grammar with its own
GrammarMatcher. On every call the processor reads what each row generated since the prompt
(``input_ids[row, prompt_length:]``), brings the row's matcher up to date (rebuilding it
when beam search reordered rows), then sets to -inf the logits of every token the grammar
forbids (``scores: float[batch, vocab_size]``, masked in place and returned). Rows whose
matcher accepted a stop token are left unmasked (transformers pads them).

With ``max_new_tokens`` the processor applies length-aware closing (docs/closing.md): the
output is complete, and a stop token ends it, within that many new tokens. Pass the same
number to ``generate``.

A processor is stateful: use a new one (or call ``reset()``) for each ``generate`` call.
Not thread-safe.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from . import GrammarCompiler, GrammarMatcher, TokenizerInfo, allocate_token_bitmask, apply_token_bitmask_inplace

try:  # subclass transformers' base class when it is there (isinstance checks in generate)
    from transformers import LogitsProcessor as _Base
except ImportError:  # pragma: no cover - the processor also works without transformers
    _Base = object


class LogitsProcessor(_Base):
    """Masks logits to a compiled grammar (lockstep.CompiledGrammar) for ``generate``."""

    def __init__(self, compiled_grammar: Any, max_new_tokens: Optional[int] = None) -> None:
        self.compiled_grammar = compiled_grammar
        self.max_new_tokens = max_new_tokens
        self.reset()

    def reset(self) -> None:
        """Forgets the rows: the next call starts a new generation."""
        self._prompt_length: Optional[int] = None
        self._matchers: List[GrammarMatcher] = []
        self._accepted: List[List[int]] = []
        self._bitmask = None

    def _new_matcher(self) -> GrammarMatcher:
        if self.max_new_tokens is None:
            return GrammarMatcher(self.compiled_grammar)
        return GrammarMatcher(self.compiled_grammar, max_tokens=self.max_new_tokens)

    def _sync(self, row: int, generated: Sequence[int]) -> None:
        m, done = self._matchers[row], self._accepted[row]
        if len(done) > len(generated) or list(generated[:len(done)]) != done:
            m.reset()  # rows were reordered (beam search): replay this row's tokens
            done.clear()
        for t in generated[len(done):]:
            if m.is_terminated():
                break  # padding after the stop token
            if not m.accept_token(int(t)):
                raise ValueError(f"row {row}: token {int(t)} breaks the grammar (another processor or a forced "
                                 f"token chose it after lockstep's mask); generated so far: {list(generated)}")
            done.append(int(t))

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        """``input_ids``: int64[batch, length]; ``scores``: float[batch, vocab_size] (torch).
        Returns ``scores``, masked in place."""
        batch = input_ids.shape[0]
        if self._prompt_length is None:
            self._prompt_length = input_ids.shape[1]
            self._matchers = [self._new_matcher() for _ in range(batch)]
            self._accepted = [[] for _ in range(batch)]
        if batch != len(self._matchers):
            raise ValueError(f"the batch has {batch} rows, the processor started with {len(self._matchers)}: "
                             "use one processor per generate call")
        vocab = self.compiled_grammar.tokenizer_info.vocab_size
        if self._bitmask is None:
            self._bitmask = allocate_token_bitmask(batch, vocab, backend="numpy")
        ids = input_ids.detach().cpu().numpy() if hasattr(input_ids, "detach") else np.asarray(input_ids)
        rows = []
        for row in range(batch):
            self._sync(row, ids[row, self._prompt_length:].tolist())
            if not self._matchers[row].is_terminated():
                self._matchers[row].fill_next_token_bitmask(self._bitmask, row)
                rows.append(row)
        if rows:
            apply_token_bitmask_inplace(scores, self._bitmask, vocab_size=min(vocab, scores.shape[-1]), indices=rows)
        return scores


def _compiler(tokenizer: Any, vocab_size: Optional[int], compiler: Optional[GrammarCompiler]) -> GrammarCompiler:
    if compiler is not None:
        return compiler
    return GrammarCompiler(TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size))


class JsonSchemaLogitsProcessor(LogitsProcessor):
    """Output valid against a JSON Schema (``schema``: str or dict). ``tokenizer``: a fast
    transformers tokenizer; ``vocab_size``: the model's logits width
    (``model.config.vocab_size``). Other keywords go to ``compile_json_schema``
    (whitespace, property_order, strict, ...). Pass ``compiler`` to reuse a GrammarCompiler
    (and its cache) across processors."""

    def __init__(self, schema: Any, tokenizer: Any = None, vocab_size: Optional[int] = None,
                 max_new_tokens: Optional[int] = None, compiler: Optional[GrammarCompiler] = None,
                 **options: Any) -> None:
        super().__init__(_compiler(tokenizer, vocab_size, compiler).compile_json_schema(schema, **options),
                         max_new_tokens)


class RegexLogitsProcessor(LogitsProcessor):
    """Output matching a regular expression as a whole."""

    def __init__(self, pattern: str, tokenizer: Any = None, vocab_size: Optional[int] = None,
                 max_new_tokens: Optional[int] = None, compiler: Optional[GrammarCompiler] = None) -> None:
        super().__init__(_compiler(tokenizer, vocab_size, compiler).compile_regex(pattern), max_new_tokens)


class GrammarLogitsProcessor(LogitsProcessor):
    """Output in the language of a GBNF grammar."""

    def __init__(self, grammar: str, tokenizer: Any = None, vocab_size: Optional[int] = None,
                 max_new_tokens: Optional[int] = None, compiler: Optional[GrammarCompiler] = None,
                 root_rule: str = "root") -> None:
        super().__init__(_compiler(tokenizer, vocab_size, compiler).compile_grammar(grammar, root_rule),
                         max_new_tokens)


__all__ = ["LogitsProcessor", "JsonSchemaLogitsProcessor", "RegexLogitsProcessor", "GrammarLogitsProcessor"]
