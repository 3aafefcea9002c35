"""Type stubs of lockstep's extension module. Shapes: a token bitmask is
int32[batch, ceil(vocab_size / 32)] (or int32[ceil(vocab_size / 32)] for one row); bit
``id % 32`` of word ``id // 32`` set = token ``id`` allowed."""

from typing import Any, Optional, Sequence, Union

__version__: str

JsonLike = Union[str, bytes, dict, list]

class TokenizerInfo:
    """A vocabulary as the grammar engine sees it: each token's exact output bytes, which
    tokens are special (never grammar text) and which stop generation, padded to the
    model's logits width. Immutable; safe to share across threads."""

    @staticmethod
    def from_file(path: str, vocab_size: Optional[int] = None,
                  stop_token_ids: Optional[Sequence[int]] = None) -> "TokenizerInfo":
        """Loads tokenizer.json (Hugging Face BPE), a GGUF file's vocabulary, GPT-2's
        encoder.json + vocab.bpe, or a llama2.c tokenizer.bin. ``vocab_size``: logits width
        (>= the tokenizer's size; padding ids are special). ``stop_token_ids``: default the
        file's EOS/EOT ids. Raises TokenizerError (file, byte offset or JSON pointer),
        ValueError for a bad size or id. Releases the GIL."""
    @staticmethod
    def from_tokenizer_json(json_text: str, vocab_size: Optional[int] = None,
                            stop_token_ids: Optional[Sequence[int]] = None,
                            name: str = "tokenizer.json") -> "TokenizerInfo":
        """The same from a tokenizer.json's text."""
    @staticmethod
    def from_tokens(token_bytes: Sequence[bytes], stop_token_ids: Sequence[int],
                    special_token_ids: Sequence[int] = ..., vocab_size: Optional[int] = None) -> "TokenizerInfo":
        """A vocabulary token by token: ``token_bytes[id]`` is exactly what token ``id``
        adds to the output. Cannot encode text."""
    @staticmethod
    def from_huggingface(tokenizer: Any, vocab_size: Optional[int] = None,
                         stop_token_ids: Optional[Sequence[int]] = None) -> "TokenizerInfo":
        """From a fast Hugging Face tokenizer (``backend_tokenizer``); ``vocab_size``
        usually ``model.config.vocab_size``; stop ids default to ``eos_token_id``."""
    @property
    def vocab_size(self) -> int: """Logits width; token ids are 0 .. vocab_size - 1."""
    @property
    def tokenizer_size(self) -> int: """Tokens the tokenizer has (the rest is padding)."""
    @property
    def bitmask_words(self) -> int: """int32 words per bitmask row: ceil(vocab_size / 32)."""
    @property
    def stop_token_ids(self) -> list[int]: ...
    @property
    def fingerprint(self) -> str: """16 hex digits; equal for interchangeable vocabularies."""
    @property
    def can_encode(self) -> bool: ...
    def is_special(self, token_id: int) -> bool: ...
    def token_bytes(self, token_id: int) -> bytes: """Raises IndexError outside the vocabulary."""
    def encode(self, text: str, add_bos: bool = False) -> list[int]: ...
    def encode_continuation(self, text: str) -> list[int]:
        """Ids whose bytes concatenate to exactly ``text`` as it appears inside output (no
        SentencePiece dummy space): for checking a text against a grammar."""
    def decode(self, ids: Sequence[int]) -> bytes: """Raw output bytes (may end mid-character)."""

class CompiledGrammar:
    """A grammar compiled for one vocabulary, with its token-mask cache. Immutable; share it
    between matchers and threads."""
    @property
    def kind(self) -> str: """'json_schema', 'tools', 'regex', 'grammar' or 'builtin_json'."""
    @property
    def source(self) -> str: ...
    @property
    def tokenizer_info(self) -> TokenizerInfo: ...
    @property
    def warnings(self) -> list[str]: ...
    @property
    def memory_bytes(self) -> int: """Bytes held (automaton, source, masks so far)."""
    @property
    def num_states(self) -> int: ...
    @property
    def num_computed_masks(self) -> int: ...
    def serialize(self) -> str:
        """JSON text for GrammarCompiler.deserialize (kind, source, options, vocabulary
        fingerprint; masks are recomputed on use)."""

class GrammarCompiler:
    """Compiles grammars for one TokenizerInfo and caches them by canonical source
    (least recently used dropped past ``cache_limit_bytes``; 0 disables the cache).
    Thread-safe. Compilation releases the GIL."""
    def __init__(self, tokenizer_info: TokenizerInfo, max_threads: int = 1,
                 cache_limit_bytes: int = 268435456, precompute: bool = False) -> None: ...
    def compile_json_schema(self, schema: JsonLike, whitespace: str = "flexible", property_order: str = "schema",
                            strict: bool = False, indent: int = 2, max_whitespace: Optional[int] = None,
                            lenient: bool = False, formats_as_annotations: bool = False,
                            default_draft: str = "2020-12", canonical_numbers: bool = False) -> CompiledGrammar:
        """A JSON Schema (str or parsed). ``whitespace``: 'flexible', 'compact' or 'pretty';
        ``strict``: objects as if ``additionalProperties: false`` (XGrammar's strict_mode).
        Raises SchemaError with ``pointer``, LockstepError with ``byte_offset`` for
        malformed JSON, LimitError."""
    def compile_builtin_json(self, whitespace: str = "flexible", max_whitespace: Optional[int] = None) -> CompiledGrammar: ...
    def compile_tools(self, tools: JsonLike, parallel: bool = False, whitespace: str = "flexible",
                      property_order: str = "schema", strict: bool = False, max_whitespace: Optional[int] = None,
                      lenient: bool = False) -> CompiledGrammar:
        """{"name": ..., "arguments": ...} for one of ``tools`` (OpenAI, MCP, BFCL forms);
        with ``parallel``, a JSON array of calls."""
    def compile_regex(self, pattern: str) -> CompiledGrammar: """Raises GrammarError (line, column)."""
    def compile_grammar(self, grammar: str, root_rule: str = "root") -> CompiledGrammar:
        """GBNF (llama.cpp syntax). Raises GrammarError (line, column)."""
    def deserialize(self, serialized: str) -> CompiledGrammar: ...
    @property
    def tokenizer_info(self) -> TokenizerInfo: ...
    @property
    def cache_size_bytes(self) -> int: ...
    @property
    def cache_entries(self) -> int: ...
    def clear_cache(self) -> None: ...

class GrammarMatcher:
    """One sequence's position in a grammar. Not thread-safe; one per sequence."""
    def __init__(self, compiled_grammar: CompiledGrammar, max_tokens: int = ...) -> None:
        """``max_tokens``: length-aware closing (the sequence, stop token included, fits in
        that many tokens and ends complete)."""
    def accept_token(self, token_id: int) -> bool:
        """False (state unchanged) when the grammar rejects it; IndexError outside the vocabulary."""
    def accept_string(self, text: Union[str, bytes]) -> bool: ...
    def validate_tokens(self, token_ids: Sequence[int]) -> int:
        """Length of the longest accepted prefix of a draft; the state is unchanged."""
    def fill_next_token_bitmask(self, bitmask: Any, index: int = 0) -> None:
        """Writes row ``index`` of ``bitmask`` (int32, C-contiguous, CPU; NumPy or torch).
        Releases the GIL."""
    def rollback(self, num_tokens: int = 1) -> None: ...
    @property
    def num_steps(self) -> int: ...
    def reset(self) -> None: ...
    def fork(self) -> "GrammarMatcher": ...
    def is_terminated(self) -> bool: ...
    def is_accepting(self) -> bool: ...
    def find_jump_forward_string(self, max_bytes: int = 4096) -> bytes: ...
    def set_max_tokens(self, max_tokens: int) -> None: ...
    def min_tokens_to_accept(self) -> Optional[int]:
        """Tokens that complete the output from here (an upper bound), None when the
        vocabulary cannot spell a completion."""
    @property
    def compiled_grammar(self) -> CompiledGrammar: ...

def fill_next_token_bitmasks(matchers: Sequence[GrammarMatcher], bitmask: Any,
                             indices: Optional[Sequence[int]] = None, max_threads: int = 0) -> None:
    """Fills row ``indices[i]`` (default i) of ``bitmask`` for matcher i on ``max_threads``
    threads (0: one per core), without the GIL."""
