"""The engines bench/compare drives, each behind the same five calls.

An engine is loaded once per host process (`load`: the vocabulary, before any clock starts),
then, for every schema: `compile(schema_text)` builds what the engine needs to produce masks,
`start()` makes a fresh matcher for one instance, `fill()` computes the next-token mask into the
engine's own buffer, `allowed(token)` reads that buffer, `accept(token)` advances the matcher
and `accepting()` says whether the text so far is a complete output.

Settings follow MaskBench's (guidance-ai/jsonschemabench, maskbench/): JSON semantics where an
engine offers a choice (any whitespace, additional properties as the schema says, properties in
any order), one thread, no grammar cache shared between schemas.
"""
from __future__ import annotations

import ctypes
import json
import os
from importlib.metadata import PackageNotFoundError, version

import numpy as np

LLAMA3_EOS = 128001  # <|end_of_text|>


def package_version(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "not installed"


def _bit(mask: np.ndarray, token: int) -> bool:
    return bool((int(mask[token >> 5]) >> (token & 31)) & 1)


class Engine:
    name = ""
    package = ""
    keep_compiler = False  # service mode: one compiler (and its caches) for every schema

    def version(self) -> str:
        return package_version(self.package)

    def load(self, tokenizer_json: str, gguf_vocab: str) -> None:
        raise NotImplementedError

    def compile(self, schema_text: str) -> None:
        raise NotImplementedError

    def start(self) -> None:
        raise NotImplementedError

    def fill(self) -> None:
        raise NotImplementedError

    def allowed(self, token: int) -> bool:
        return _bit(self.mask, token)

    def accept(self, token: int) -> bool:
        raise NotImplementedError

    def accepting(self) -> bool:
        raise NotImplementedError


class Lockstep(Engine):
    name = "lockstep"
    package = "lockstep"

    def load(self, tokenizer_json, gguf_vocab):
        import lockstep
        self.lib = lockstep
        self.info = lockstep.TokenizerInfo.from_file(tokenizer_json)
        self.mask = np.zeros(self.info.bitmask_words, dtype=np.int32)
        # A compiler per schema in fresh mode; one for the whole run as a service has it.
        self.compiler = None

    def compile(self, schema_text):
        if self.compiler is None or not self.keep_compiler:
            self.compiler = self.lib.GrammarCompiler(self.info, max_threads=1)
        self.grammar = self.compiler.compile_json_schema(schema_text, whitespace="flexible",
                                                         property_order="any")

    def start(self):
        self.matcher = self.lib.GrammarMatcher(self.grammar)

    def fill(self):
        self.matcher.fill_next_token_bitmask(self.mask)

    def accept(self, token):
        return self.matcher.accept_token(token)

    def accepting(self):
        return self.matcher.is_accepting()


class XGrammar(Engine):
    name = "xgrammar"
    package = "xgrammar"

    def load(self, tokenizer_json, gguf_vocab):
        import xgrammar as xgr
        from transformers import PreTrainedTokenizerFast
        self.xgr = xgr
        tok = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json)
        self.info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok),
                                                       stop_token_ids=[LLAMA3_EOS])
        self.mask = np.zeros((self.info.vocab_size + 31) // 32, dtype=np.int32)
        self.bitmask = None

    def compile(self, schema_text):
        # MaskBench's "XGrammar (compliant)": any whitespace, non-strict (JSON Schema semantics).
        compiler = self.xgr.GrammarCompiler(self.info, max_threads=1, cache_enabled=False)
        self.grammar = compiler.compile_json_schema(schema_text, any_whitespace=True,
                                                    strict_mode=False)

    def start(self):
        self.matcher = self.xgr.GrammarMatcher(self.grammar)
        if self.bitmask is None:
            self.bitmask = self.xgr.allocate_token_bitmask(1, self.info.vocab_size)

    def fill(self):
        self.matcher.fill_next_token_bitmask(self.bitmask)

    def allowed(self, token):
        return bool((int(self.bitmask[0, token >> 5]) >> (token & 31)) & 1)

    def accept(self, token):
        return self.matcher.accept_token(token)

    def accepting(self):
        return self.allowed(LLAMA3_EOS)


class LLGuidance(Engine):
    name = "llguidance"
    package = "llguidance"

    def load(self, tokenizer_json, gguf_vocab):
        import llguidance
        with open(tokenizer_json, encoding="utf-8") as f:
            self.tokenizer = llguidance.LLTokenizer(f.read(), eos_token=LLAMA3_EOS)
        self.llg = llguidance
        self.mask = np.zeros((self.tokenizer.vocab_size + 31) // 32, dtype=np.int32)

    def compile(self, schema_text):
        self.grammar = self.llg.LLMatcher.grammar_from_json_schema(schema_text)
        matcher = self.llg.LLMatcher(self.tokenizer, self.grammar)
        if matcher.is_error():
            raise ValueError(matcher.get_error())
        self.first = matcher

    def start(self):
        # The compiled grammar is in `first`; each instance starts from a copy of it.
        self.matcher = self.first.deep_copy()

    def fill(self):
        self.matcher.unsafe_compute_mask_ptr(self.mask.ctypes.data, self.mask.nbytes)

    def accept(self, token):
        return self.matcher.consume_token(token) and not self.matcher.is_error()

    def accepting(self):
        return self.matcher.is_accepting()


class OutlinesCore(Engine):
    name = "outlines-core"
    package = "outlines-core"

    def load(self, tokenizer_json, gguf_vocab):
        import outlines_core
        self.oc = outlines_core
        with open(tokenizer_json, encoding="utf-8") as f:
            spec = json.load(f)
        # Byte-level BPE: each character of a token's text stands for one byte (GPT-2's table).
        table = _byte_level_table()
        by_bytes: dict[bytes, list[int]] = {}
        for text, token in spec["model"]["vocab"].items():
            by_bytes.setdefault(bytes(table[c] for c in text), []).append(token)
        self.vocabulary = outlines_core.Vocabulary(LLAMA3_EOS, by_bytes)
        ids = [*spec["model"]["vocab"].values(), *(t["id"] for t in spec.get("added_tokens", []))]
        self.mask = np.zeros((max(ids) + 1 + 31) // 32, dtype=np.int32)

    def compile(self, schema_text):
        regex = self.oc.json_schema.build_regex_from_schema(schema_text)
        self.index = self.oc.Index(regex, self.vocabulary)

    def start(self):
        self.guide = self.oc.Guide(self.index)

    def fill(self):
        self.guide.write_mask_into(self.mask.ctypes.data, self.mask.size, 4)

    def accept(self, token):
        self.guide.advance(token, return_tokens=False)
        return True

    def accepting(self):
        return self.guide.is_finished() or self.allowed(LLAMA3_EOS)


class LlamaCpp(Engine):
    name = "llama.cpp"
    package = "llama_cpp_python"

    def load(self, tokenizer_json, gguf_vocab):
        import llama_cpp
        from llama_cpp import llama_grammar
        self.lc = llama_cpp
        self.to_gbnf = llama_grammar.json_schema_to_gbnf
        llama_cpp.llama_log_set(_silent_log, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(gguf_vocab.encode(), params)
        if not self.model:
            raise RuntimeError(f"{gguf_vocab}: llama.cpp could not load the vocabulary")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        n = llama_cpp.llama_vocab_n_tokens(self.vocab)
        self.eos = llama_cpp.llama_vocab_eos(self.vocab)
        self.data = (llama_cpp.llama_token_data * n)()
        self.ids = np.arange(n, dtype=np.int32)
        self.view = np.ctypeslib.as_array(ctypes.cast(self.data, ctypes.POINTER(ctypes.c_int32)),
                                          shape=(n * 3,))
        self.array = llama_cpp.llama_token_data_array(data=self.data, size=n, selected=-1,
                                                       sorted=False)
        self.sampler = None

    def compile(self, schema_text):
        self.gbnf = self.to_gbnf(schema_text)
        self._new_sampler()

    def _new_sampler(self):
        if self.sampler:
            self.lc.llama_sampler_free(self.sampler)
        self.sampler = self.lc.llama_sampler_init_grammar(self.vocab, self.gbnf.encode(), b"root")
        if not self.sampler:
            raise ValueError("llama.cpp rejected the grammar made from the schema")

    def start(self):
        self.lc.llama_sampler_reset(self.sampler)

    def fill(self):
        # Every token with logit 0; the grammar sampler sets the disallowed ones to -inf.
        self.view[0::3] = self.ids
        self.view[1::3] = 0
        self.array.size = len(self.ids)
        self.lc.llama_sampler_apply(self.sampler, ctypes.byref(self.array))

    def allowed(self, token):
        return self.data[token].logit != float("-inf")

    def accept(self, token):
        self.lc.llama_sampler_accept(self.sampler, token)
        return True

    def accepting(self):
        return self.allowed(self.eos)


@ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
def _silent_log(level, text, user_data):
    pass


def _byte_level_table() -> dict[str, int]:
    """GPT-2's byte-to-unicode table, inverted: character → byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) \
        + list(range(0xAE, 0xFF + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


ENGINES = {e.name: e for e in (Lockstep, XGrammar, LLGuidance, OutlinesCore, LlamaCpp)}


def make(name: str) -> Engine:
    if name not in ENGINES:
        raise SystemExit(f"unknown engine {name!r}; choose from {', '.join(ENGINES)}")
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    return ENGINES[name]()
