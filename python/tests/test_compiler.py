"""TokenizerInfo, GrammarCompiler (cache, serialization), errors with locations, and the
bitmask helpers."""

from __future__ import annotations

import numpy as np
import pytest

import lockstep


def test_tokenizer_info_padding_and_stop_ids(shared, llama3):
    path = str(shared / "vocab/llama3-hf/tokenizer.json")
    padded = lockstep.TokenizerInfo.from_file(path, vocab_size=llama3.vocab_size + 64, stop_token_ids=[128009])
    assert padded.vocab_size == llama3.vocab_size + 64
    assert padded.tokenizer_size == llama3.vocab_size
    assert padded.stop_token_ids == [128009]
    assert padded.is_special(llama3.vocab_size + 3)
    assert padded.decode(padded.encode("Hello world")) == b"Hello world"
    assert llama3.token_bytes(llama3.encode(" world")[0]) == b" world"
    with pytest.raises(ValueError):
        lockstep.TokenizerInfo.from_file(path, vocab_size=10)


def test_tokenizer_info_from_tokens():
    info = lockstep.TokenizerInfo.from_tokens([b"a", b"b", b"ab", b"", b"</s>"], stop_token_ids=[3],
                                              special_token_ids=[4], vocab_size=40)
    assert info.vocab_size == 40 and info.bitmask_words == 2 and not info.can_encode
    m = lockstep.GrammarMatcher(lockstep.GrammarCompiler(info).compile_regex("(ab)+"))
    bm = lockstep.allocate_token_bitmask(1, 40, backend="numpy")
    m.fill_next_token_bitmask(bm)
    words = bm[0].view(np.uint32)
    assert [i for i in range(40) if (words[i >> 5] >> (i & 31)) & 1] == [0, 2]


def test_compiler_cache_and_serialization(llama3):
    compiler = lockstep.GrammarCompiler(llama3, cache_limit_bytes=64 << 20)
    a = compiler.compile_json_schema({"type": "integer"})
    b = compiler.compile_json_schema('{ "type" : "integer" }')
    assert compiler.cache_entries == 1
    assert a.serialize() != "" and a.kind == "json_schema"
    c = compiler.compile_json_schema({"type": "integer"}, whitespace="compact")
    assert compiler.cache_entries == 2
    restored = compiler.deserialize(c.serialize())
    assert compiler.cache_entries == 2
    m1, m2 = lockstep.GrammarMatcher(c), lockstep.GrammarMatcher(restored)
    x1 = lockstep.allocate_token_bitmask(1, llama3.vocab_size, backend="numpy")
    x2 = lockstep.allocate_token_bitmask(1, llama3.vocab_size, backend="numpy")
    m1.fill_next_token_bitmask(x1)
    m2.fill_next_token_bitmask(x2)
    assert np.array_equal(x1, x2)
    other = lockstep.GrammarCompiler(lockstep.TokenizerInfo.from_tokens([b"a"], stop_token_ids=[]))
    with pytest.raises(lockstep.LockstepError) as e:
        other.deserialize(c.serialize())
    assert e.value.pointer == "/vocabulary"
    assert b.num_states > 0 and b.memory_bytes > 0
    compiler.clear_cache()
    assert compiler.cache_entries == 0


def test_errors_carry_their_location(compiler):
    with pytest.raises(lockstep.SchemaError) as e:
        compiler.compile_json_schema({"type": "object", "properties": {"a": {"type": "intger"}}})
    assert e.value.pointer == "/properties/a/type"
    assert isinstance(e.value, ValueError)
    with pytest.raises(lockstep.LockstepError) as e:
        compiler.compile_json_schema('{"type": ')
    assert e.value.byte_offset is not None
    with pytest.raises(lockstep.LockstepError, match="the number -1e999 is beyond the range of a double") as e:
        compiler.compile_json_schema('{"type": "number", "maximum": -1e999}')
    assert (e.value.line, e.value.column, e.value.byte_offset) == (1, 31, 31)
    with pytest.raises(lockstep.GrammarError) as e:
        compiler.compile_grammar('root ::= "a"\nx ::= (')
    assert e.value.line == 2 and e.value.column is not None
    with pytest.raises(lockstep.GrammarError):
        compiler.compile_regex("a(b")
    with pytest.raises(lockstep.SchemaError) as e:
        compiler.compile_tools([{"type": "function", "function": {"name": "f", "parameters": {"type": 5}}}])
    assert e.value.pointer.startswith("/0/function/parameters")
    with pytest.raises(ValueError, match="whitespace"):
        compiler.compile_json_schema({"type": "integer"}, whitespace="wide")
    with pytest.raises(lockstep.TokenizerError) as e:
        lockstep.TokenizerInfo.from_tokenizer_json('{"model": 3', name="tok")
    assert e.value.file == "tok"


def test_tools_compile_and_match(compiler, llama3):
    tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
    m = lockstep.GrammarMatcher(compiler.compile_tools(tools, whitespace="compact"))
    assert m.accept_string('{"name":"get_weather","arguments":{"city":"Paris"}}')
    assert m.is_accepting()


def test_apply_token_bitmask_inplace_numpy():
    vocab = 70
    bitmask = lockstep.allocate_token_bitmask(2, vocab, backend="numpy")
    words = bitmask.view(np.uint32)
    words[0, :] = 0
    words[0, 0] = (1 << 3) | (1 << 31)
    words[0, 2] = 1 << 5  # token 69
    logits = np.zeros((2, 72), dtype=np.float32)
    lockstep.apply_token_bitmask_inplace(logits, bitmask, vocab_size=vocab)
    assert set(np.flatnonzero(np.isfinite(logits[0][:vocab]))) == {3, 31, 69}
    assert np.isfinite(logits[0][vocab:]).all()  # past vocab_size: left alone
    assert np.isfinite(logits[1]).all()          # an all-allowed row
    one = np.zeros(vocab, dtype=np.float64)
    lockstep.apply_token_bitmask_inplace(one, bitmask[0])
    assert set(np.flatnonzero(np.isfinite(one))) == {3, 31, 69}
    assert lockstep.bitmask_words(vocab) == 3
