"""SGLang integration: a grammar backend registered with SGLang's
``register_grammar_backend``.

    import lockstep.sglang
    lockstep.sglang.register()          # name "lockstep"
    # then run SGLang with --grammar-backend lockstep (in the process that runs the
    # scheduler: e.g. from a launcher script that imports lockstep.sglang first)

``LockstepGrammarBackend`` subclasses SGLang's ``BaseGrammarBackend`` (its dispatch_json /
dispatch_regex / dispatch_ebnf methods; SGLang caches the returned objects by key and asks
each request for a ``copy()``), and ``LockstepGrammarObject`` subclasses
``BaseGrammarObject``: accept_token, rollback, is_terminated, allocate / fill / move / reset
/ apply of the vocab mask (int32 bitmasks, XGrammar's layout), copy, and jump-forward
(try_jump_forward, jump_forward_str_state, jump_and_retokenize). A grammar that does not
compile becomes SGLang's InvalidGrammarObject carrying lockstep's message (with its line:
column or JSON pointer), so SGLang rejects that request alone.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import torch
from sglang.srt.constrained.base_grammar_backend import (BaseGrammarBackend, BaseGrammarObject, GrammarStats,
                                                         InvalidGrammarObject, register_grammar_backend)

from . import (CompiledGrammar, GrammarCompiler, GrammarMatcher, LockstepError, TokenizerInfo, allocate_token_bitmask,
               apply_token_bitmask_inplace)


class LockstepGrammarObject(BaseGrammarObject):
    """One request's matcher over a CompiledGrammar."""

    def __init__(self, grammar: CompiledGrammar, key_string: str = "", dispatch_type: str = "") -> None:
        super().__init__()
        self.grammar = grammar
        self.matcher = GrammarMatcher(grammar)
        self.key_string = key_string
        self.grammar_stats = GrammarStats(dispatch_type=dispatch_type)
        self.accepted_tokens: List[int] = []

    def accept_token(self, token: int) -> None:
        """Raises ValueError when the grammar rejects ``token`` (as SGLang's backends do)."""
        if self.is_terminated():
            return
        self.current_token = token
        if not self.matcher.accept_token(int(token)):
            raise ValueError(f"token {token} is not accepted by the grammar after {self.accepted_tokens}; "
                             f"key: {self.key_string[:200]}")
        self.accepted_tokens.append(int(token))

    def rollback(self, k: int) -> None:
        self.matcher.rollback(k)
        if k:
            del self.accepted_tokens[-k:]

    def is_terminated(self) -> bool:
        return self.matcher.is_terminated()

    def allocate_vocab_mask(self, vocab_size: int, batch_size: int, device: Any) -> torch.Tensor:
        """int32[batch_size, ceil(vocab_size / 32)] on the CPU, every token allowed."""
        return allocate_token_bitmask(batch_size, vocab_size, backend="torch")

    def fill_vocab_mask(self, vocab_mask: torch.Tensor, idx: int) -> None:
        self.matcher.fill_next_token_bitmask(vocab_mask, idx)

    @staticmethod
    def reset_vocab_mask(vocab_mask: torch.Tensor) -> None:
        vocab_mask.fill_(-1)

    @staticmethod
    def move_vocab_mask(vocab_mask: torch.Tensor, device: Any) -> torch.Tensor:
        return vocab_mask.to(device, non_blocking=True)

    @staticmethod
    def apply_vocab_mask(logits: torch.Tensor, vocab_mask: torch.Tensor) -> None:
        """Forbidden tokens' logits become -inf (``logits: float[batch, vocab]``)."""
        apply_token_bitmask_inplace(logits, vocab_mask.to(logits.device))

    def copy(self) -> "LockstepGrammarObject":
        """A fresh matcher at the start of the same grammar (SGLang's cache hands one to each
        request)."""
        return LockstepGrammarObject(self.grammar, self.key_string, self.grammar_stats.dispatch_type or "")

    def try_jump_forward(self, tokenizer: Any) -> Optional[Tuple[List[int], str]]:
        s = self.matcher.find_jump_forward_string()
        if not s:
            return None
        return [], s.decode("utf-8", errors="surrogateescape")

    def jump_forward_str_state(self, helper: Tuple[List[int], str]) -> Tuple[str, int]:
        return helper[1], -1

    def jump_and_retokenize(self, old_output_ids: List[int], new_output_ids: List[int], next_state: int) -> None:
        """Rolls back to the longest common prefix of the old and new ids, then accepts the
        new ones."""
        k = 0
        while k < len(old_output_ids) and k < len(new_output_ids) and old_output_ids[k] == new_output_ids[k]:
            k += 1
        if k < len(old_output_ids):
            self.rollback(len(old_output_ids) - k)
        for i in range(k, len(new_output_ids)):
            self.accept_token(new_output_ids[i])


class LockstepGrammarBackend(BaseGrammarBackend):
    """SGLang grammar backend over one GrammarCompiler for the model's tokenizer.
    ``any_whitespace=False`` compiles schemas with compact whitespace."""

    def __init__(self, tokenizer: Any, vocab_size: int, eos_token_ids: Optional[Sequence[int]] = None,
                 any_whitespace: bool = True) -> None:
        super().__init__()
        stop = sorted(set(eos_token_ids)) if eos_token_ids else None
        self.tokenizer_info = TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size, stop_token_ids=stop)
        self.compiler = GrammarCompiler(self.tokenizer_info)
        self.vocab_size = vocab_size
        self.whitespace = "flexible" if any_whitespace else "compact"

    def _object(self, kind: str, key_string: str, compile_fn: Any) -> BaseGrammarObject:
        try:
            return LockstepGrammarObject(compile_fn(), key_string, kind)
        except LockstepError as e:
            return InvalidGrammarObject(str(e))

    def dispatch_json(self, key_string: str) -> BaseGrammarObject:
        if key_string == "$$ANY$$":
            return self._object("json", key_string, lambda: self.compiler.compile_builtin_json(whitespace=self.whitespace))
        return self._object("json", key_string,
                            lambda: self.compiler.compile_json_schema(key_string, whitespace=self.whitespace))

    def dispatch_regex(self, key_string: str) -> BaseGrammarObject:
        return self._object("regex", key_string, lambda: self.compiler.compile_regex(key_string))

    def dispatch_ebnf(self, key_string: str) -> BaseGrammarObject:
        return self._object("ebnf", key_string, lambda: self.compiler.compile_grammar(key_string))

    def reset(self) -> None:
        super().reset()
        self.compiler.clear_cache()


def _create(server_args: Any, tokenizer: Any, vocab_size: int, eos_token_ids: Optional[set] = None) -> LockstepGrammarBackend:
    any_ws = not bool(getattr(server_args, "constrained_json_disable_any_whitespace", False))
    return LockstepGrammarBackend(tokenizer, vocab_size, eos_token_ids, any_whitespace=any_ws)


def register(name: str = "lockstep") -> None:
    """Registers the backend under ``name`` (SGLang's ``--grammar-backend NAME``)."""
    register_grammar_backend(name, _create)


__all__ = ["LockstepGrammarBackend", "LockstepGrammarObject", "register"]
