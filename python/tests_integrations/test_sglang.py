"""lockstep's SGLang grammar backend against the installed sglang package's base classes,
driven the way SGLang's grammar manager and sampler drive a backend: dispatch by key, cached
object copied per request, vocab mask allocated / filled / moved / applied, tokens accepted,
jump-forward and retokenization, rollback, invalid grammars."""

from __future__ import annotations

import json
import types

import jsonschema
import pytest
import torch

base = pytest.importorskip("sglang.srt.constrained.base_grammar_backend")

import lockstep  # noqa: E402
import lockstep.sglang  # noqa: E402

SCHEMA = {"type": "object", "properties": {"id": {"type": "integer", "minimum": 0, "maximum": 99},
                                           "tag": {"enum": ["red", "green"]}},
          "required": ["id", "tag"], "additionalProperties": False}


@pytest.fixture(scope="module")
def backend(llama3_hf):
    lockstep.sglang.register()
    factory = base.GRAMMAR_BACKEND_REGISTRY["lockstep"]
    args = types.SimpleNamespace(constrained_json_disable_any_whitespace=True)
    b = factory(args, llama3_hf, 128256, {llama3_hf.eos_token_id})
    assert isinstance(b, base.BaseGrammarBackend)
    return b


def request_grammar(backend, key):
    value, hit = backend.get_cached_or_future_value(key, False)
    if not hit:
        value = value.result()
        backend.set_cache(key, value)
        value = value.copy()
    return value


def test_decode_loop(backend, llama3_hf):
    key = ("json", json.dumps(SCHEMA))
    g = request_grammar(backend, key)
    assert isinstance(g, base.BaseGrammarObject) and not isinstance(g, base.InvalidGrammarObject)
    mask = g.allocate_vocab_mask(128256, 2, "cpu")
    gen = torch.Generator().manual_seed(1)
    ids = []
    for _ in range(100):
        if g.is_terminated():
            break
        g.fill_vocab_mask(mask, 1)
        m = g.move_vocab_mask(mask, "cpu")
        logits = torch.randn(2, 128256, generator=gen)
        g.apply_vocab_mask(logits, m)
        t = int(torch.argmax(logits[1]))
        g.accept_token(t)
        ids.append(t)
    assert g.is_terminated() and ids[-1] == llama3_hf.eos_token_id
    jsonschema.validate(json.loads(llama3_hf.decode(ids[:-1])), SCHEMA)
    # A second request: the cached object's copy starts fresh.
    h = request_grammar(backend, key)
    assert not h.is_terminated() and h.accepted_tokens == []
    with pytest.raises(ValueError):
        h.accept_token(llama3_hf.encode("]", add_special_tokens=False)[0])


def test_jump_forward_and_retokenize(backend, llama3_hf):
    g = request_grammar(backend, ("json", json.dumps(SCHEMA)))
    helper = g.try_jump_forward(llama3_hf)
    assert helper is not None
    s, state = g.jump_forward_str_state(helper)
    assert s == '{"'
    old = llama3_hf.encode('{"id":4', add_special_tokens=False)
    for t in old:
        g.accept_token(t)
    new = llama3_hf.encode('{"id":42', add_special_tokens=False)
    g.jump_and_retokenize(old, new, state)
    assert g.accepted_tokens == new
    g.rollback(len(new))
    assert g.accepted_tokens == []


def test_invalid_grammars_become_invalid_objects(backend):
    g = backend._init_value_dispatch(("json", '{"type": "intger"}'), False)
    assert isinstance(g, base.InvalidGrammarObject) and "/type" in g.error_message
    g = backend._init_value_dispatch(("regex", "a("), False)
    assert isinstance(g, base.InvalidGrammarObject)
    g = backend._init_value_dispatch(("ebnf", 'root ::= "a" [0-9]+'), False)
    assert isinstance(g, lockstep.sglang.LockstepGrammarObject)
    g = backend._init_value_dispatch(("json", "$$ANY$$"), False)
    assert isinstance(g, lockstep.sglang.LockstepGrammarObject)
