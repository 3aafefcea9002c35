"""GrammarMatcher from Python: masks against brute force, stepping, rollback, fork,
jump-forward, draft validation, length-aware closing, and outputs checked by Python's
jsonschema."""

from __future__ import annotations

import json
import random

import jsonschema
import numpy as np
import pytest

import lockstep


@pytest.fixture(scope="module")
def tok512(shared):
    # The bundled model's 512-token vocabulary: small enough to try every token at every step.
    return lockstep.TokenizerInfo.from_file(str(shared / "models/stories260K/tok512.bin"))


def allowed_ids(bitmask_row: np.ndarray, vocab_size: int) -> set[int]:
    words = bitmask_row.view(np.uint32)
    return {i for i in range(vocab_size) if (words[i >> 5] >> (i & 31)) & 1}


def brute_force(matcher: lockstep.GrammarMatcher, vocab_size: int) -> set[int]:
    """Token t is allowed iff the matcher accepts it (the Earley parse, not the mask engine)."""
    out = set()
    for t in range(vocab_size):
        if matcher.accept_token(t):
            out.add(t)
            matcher.rollback(1)
    return out


@pytest.mark.parametrize("kind,source", [
    ("grammar", "json.gbnf"),
    ("grammar", "arithmetic.gbnf"),
    ("regex", r"(once|upon|a|time)( (once|upon|a|time)){0,6}\."),
    ("schema", {"type": "object", "properties": {"name": {"type": "string", "maxLength": 12},
                                                  "age": {"type": "integer", "minimum": 0}},
                "required": ["name"]}),
])
def test_masks_equal_brute_force_on_random_walks(shared, tok512, kind, source):
    compiler = lockstep.GrammarCompiler(tok512)
    if kind == "grammar":
        grammar = compiler.compile_grammar((shared / "grammars/llama.cpp" / source).read_text())
    elif kind == "regex":
        grammar = compiler.compile_regex(source)
    else:
        grammar = compiler.compile_json_schema(source)
    rng = random.Random(11)
    n = tok512.vocab_size
    bitmask = lockstep.allocate_token_bitmask(1, n, backend="numpy")
    for walk in range(3):
        m = lockstep.GrammarMatcher(grammar)
        for _ in range(25):
            m.fill_next_token_bitmask(bitmask)
            got = allowed_ids(bitmask[0], n)
            assert got == brute_force(m, n), (walk, m.num_steps)
            text = [t for t in got if not tok512.is_special(t)]
            if not text:
                break
            assert m.accept_token(rng.choice(text))


def test_schema_outputs_validate_with_jsonschema(compiler, llama3):
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 1, "maximum": 999},
            "tags": {"type": "array", "items": {"enum": ["a", "b", "c"]}, "maxItems": 3},
            "ok": {"type": "boolean"},
        },
        "required": ["id", "ok"],
        "additionalProperties": False,
    }
    grammar = compiler.compile_json_schema(schema, whitespace="compact")
    rng = random.Random(5)
    bitmask = lockstep.allocate_token_bitmask(1, llama3.vocab_size, backend="numpy")
    for _ in range(5):
        m = lockstep.GrammarMatcher(grammar, max_tokens=40)  # length-aware closing: ends complete
        ids = []
        while not m.is_terminated():
            m.fill_next_token_bitmask(bitmask)
            allowed = sorted(allowed_ids(bitmask[0], llama3.vocab_size))
            assert allowed, ids
            t = rng.choice(allowed)
            assert m.accept_token(t)
            ids.append(t)
        assert len(ids) <= 40
        doc = json.loads(llama3.decode(ids[:-1]))
        jsonschema.validate(doc, schema)


def test_stepping_rollback_fork_and_jump_forward(compiler, llama3):
    grammar = compiler.compile_json_schema(
        {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"],
         "additionalProperties": False}, whitespace="compact")
    m = lockstep.GrammarMatcher(grammar)
    assert m.find_jump_forward_string() == b'{"'
    ids = llama3.encode('{"name":"Ada"}')
    assert m.validate_tokens(ids) == len(ids)
    assert m.validate_tokens([ids[0], ids[0]]) == 1
    assert m.num_steps == 0
    for t in ids:
        assert m.accept_token(t)
    assert m.is_accepting() and m.min_tokens_to_accept() == 0
    f = m.fork()
    assert f.accept_token(llama3.stop_token_ids[0])
    assert f.is_terminated() and not m.is_terminated()
    m.rollback(len(ids))
    assert m.num_steps == 0 and not m.is_accepting()
    assert m.min_tokens_to_accept() >= 2
    assert m.accept_string('{"name":"')
    assert not m.accept_string(b"\x01")
    m.reset()
    assert m.num_steps == 0
    with pytest.raises(IndexError):
        m.accept_token(-1)


def test_batch_fill_equals_one_by_one(shared, compiler, llama3):
    grammar = compiler.compile_grammar((shared / "grammars/llama.cpp/json.gbnf").read_text())
    matchers = [lockstep.GrammarMatcher(grammar) for _ in range(4)]
    for m, text in zip(matchers, ['{"a"', '{"b": [1, 2', '{"c": "x', ""]):
        assert m.accept_string(text)
    batch = lockstep.allocate_token_bitmask(6, llama3.vocab_size, backend="numpy")
    lockstep.fill_next_token_bitmasks(matchers, batch, indices=[0, 2, 3, 5], max_threads=2)
    one = lockstep.allocate_token_bitmask(1, llama3.vocab_size, backend="numpy")
    for m, row in zip(matchers, [0, 2, 3, 5]):
        m.fill_next_token_bitmask(one)
        assert np.array_equal(one[0], batch[row])
    assert (batch[1] == -1).all() and (batch[4] == -1).all()  # rows without a matcher: untouched
    with pytest.raises(IndexError):
        lockstep.fill_next_token_bitmasks(matchers, batch, indices=[0, 2, 3, 6])
    with pytest.raises(ValueError, match="differ in length"):
        lockstep.fill_next_token_bitmasks(matchers, batch, indices=[0])


def test_bitmask_shape_errors(compiler, llama3):
    m = lockstep.GrammarMatcher(compiler.compile_regex("a+"))
    with pytest.raises(ValueError, match="words per row"):
        m.fill_next_token_bitmask(np.zeros((1, 3), dtype=np.int32))
    with pytest.raises(TypeError):
        m.fill_next_token_bitmask(np.zeros((1, llama3.bitmask_words), dtype=np.float32))
    with pytest.raises(IndexError):
        m.fill_next_token_bitmask(lockstep.allocate_token_bitmask(1, llama3.vocab_size, backend="numpy"), index=1)
