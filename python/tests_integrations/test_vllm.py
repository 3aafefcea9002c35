"""lockstep's vLLM backend, driven the way vLLM's StructuredOutputManager drives a backend,
against the installed vllm package's own base classes; masks applied with XGrammar's
apply_token_bitmask_inplace, which vLLM's model runner uses."""

from __future__ import annotations

import importlib.metadata
import json
import types

import jsonschema
import pytest
import torch

vllm_types = pytest.importorskip("vllm.v1.structured_output.backend_types")
from vllm.config.structured_outputs import StructuredOutputsConfig  # noqa: E402
from vllm.v1.structured_output.backend_types import (StructuredOutputBackend, StructuredOutputGrammar,  # noqa: E402
                                                     StructuredOutputOptions)

import lockstep  # noqa: E402
from lockstep.vllm import LockstepBackend, LockstepGrammar  # noqa: E402

SCHEMA = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 10},
                                           "days": {"type": "integer", "minimum": 1, "maximum": 14}},
          "required": ["city", "days"], "additionalProperties": False}


def backend_for(tokenizer, vocab_size: int, compact: bool = False) -> LockstepBackend:
    config = types.SimpleNamespace(structured_outputs_config=StructuredOutputsConfig(
        backend="guidance", disable_any_whitespace=compact))
    return LockstepBackend(config, tokenizer=tokenizer, vocab_size=vocab_size)


def fill(grammar: StructuredOutputGrammar, bitmask: torch.Tensor, index: int) -> None:
    # StructuredOutputManager._fill_bitmasks: a terminated grammar's row allows everything.
    if not grammar.is_terminated():
        grammar.fill_bitmask(bitmask, index)
    else:
        bitmask[index].fill_(-1)


def test_is_a_vllm_backend(llama3_hf):
    b = backend_for(llama3_hf, 128256 + 64)
    assert isinstance(b, StructuredOutputBackend)
    g = b.compile_grammar(StructuredOutputOptions.JSON, json.dumps(SCHEMA))
    assert isinstance(g, StructuredOutputGrammar) and isinstance(g, LockstepGrammar)
    bm = b.allocate_token_bitmask(8)
    assert bm.dtype == torch.int32 and tuple(bm.shape) == (8, (128256 + 64 + 31) // 32)
    b.destroy()


def test_decode_loop_like_the_manager(llama3_hf):
    import xgrammar

    vocab = 128256 + 64  # logits wider than the tokenizer, as models have them
    b = backend_for(llama3_hf, vocab, compact=True)
    bitmask = b.allocate_token_bitmask(4)
    gen = torch.Generator().manual_seed(3)
    requests = {f"r{i}": b.compile_grammar(StructuredOutputOptions.JSON, json.dumps(SCHEMA),
                                           stop_token_ids={llama3_hf.eos_token_id}) for i in range(3)}
    outputs = {r: [] for r in requests}
    for step in range(200):
        live = [r for r, g in requests.items() if not g.is_terminated()]
        if not live:
            break
        for index, r in enumerate(live):
            fill(requests[r], bitmask, index)
        logits = torch.randn(len(live), vocab, generator=gen)
        xgrammar.apply_token_bitmask_inplace(logits, bitmask[:len(live)])
        # Length-aware pressure without closing: after a while, prefer ending.
        if step > 30:
            logits[:, llama3_hf.eos_token_id] += 50
        for index, r in enumerate(live):
            token = int(torch.argmax(logits[index]))
            assert requests[r].accept_tokens(r, [token])
            outputs[r].append(token)
    for r, ids in outputs.items():
        assert requests[r].is_terminated(), r
        assert ids[-1] == llama3_hf.eos_token_id
        jsonschema.validate(json.loads(llama3_hf.decode(ids[:-1])), SCHEMA)


def test_speculative_validate_accept_rollback(llama3_hf):
    vocab = 128256
    b = backend_for(llama3_hf, vocab)
    g = b.compile_grammar(StructuredOutputOptions.JSON, json.dumps(SCHEMA))
    good = llama3_hf.encode('{"city":"Oslo","days":3}', add_special_tokens=False)
    prefix = good[:3]
    assert g.accept_tokens("r", prefix)
    draft = good[3:] + good[:2]  # the rest, then tokens that cannot follow
    assert g.validate_tokens(draft) == good[3:]
    before = b.allocate_token_bitmask(1)
    fill(g, before, 0)
    # The manager's bitmask pass over speculative tokens: accept each, fill, then roll back.
    masks = b.allocate_token_bitmask(len(good) - 3 + 1)
    for i, t in enumerate(good[3:]):
        fill(g, masks, i)
        assert g.accept_tokens("r", [t])
    fill(g, masks, len(good) - 3)
    assert g.num_processed_tokens == len(good)
    g.rollback(len(good) - 3)
    after = b.allocate_token_bitmask(1)
    fill(g, after, 0)
    assert torch.equal(before, after)
    assert torch.equal(masks[0], before[0])
    g.reset()
    assert g.num_processed_tokens == 0 and not g.is_terminated()


def test_request_stop_ids_end_the_output_where_it_is_complete(llama3_hf):
    b = backend_for(llama3_hf, 128256)
    stop = 128001  # <|end_of_text|>: a request stop id beyond the tokenizer's eos
    g = b.compile_grammar(StructuredOutputOptions.REGEX, "[0-9]{2}", stop_token_ids={stop, llama3_hf.eos_token_id})
    bm = b.allocate_token_bitmask(1)
    fill(g, bm, 0)
    assert not (int(bm[0, stop >> 5]) >> (stop & 31)) & 1
    assert not g.accept_tokens("r", [stop])
    assert g.accept_tokens("r", llama3_hf.encode("42", add_special_tokens=False))
    fill(g, bm, 0)
    assert (int(bm[0, stop >> 5]) >> (stop & 31)) & 1
    assert g.validate_tokens([stop, 5]) == [stop]
    assert not g.is_terminated()
    assert g.accept_tokens("r", [stop]) and g.is_terminated()
    g.rollback(1)
    assert not g.is_terminated()


def test_choice_grammar_and_json_object(llama3_hf):
    b = backend_for(llama3_hf, 128256)
    g = b.compile_grammar(StructuredOutputOptions.CHOICE, json.dumps(["yes", "no (sure)"]))
    assert g.accept_tokens("r", llama3_hf.encode("no (sure)", add_special_tokens=False))
    assert g.accept_tokens("r", [llama3_hf.eos_token_id]) and g.is_terminated()
    g = b.compile_grammar(StructuredOutputOptions.JSON_OBJECT, "")
    assert g.validate_tokens(llama3_hf.encode("[1]", add_special_tokens=False)) == []
    g = b.compile_grammar(StructuredOutputOptions.GRAMMAR, 'root ::= "a" [0-9]+')
    assert g.accept_tokens("r", llama3_hf.encode("a12", add_special_tokens=False))
    with pytest.raises(lockstep.GrammarError):
        b.compile_grammar(StructuredOutputOptions.REGEX, "a(")
    with pytest.raises(ValueError):
        b.compile_grammar(StructuredOutputOptions.STRUCTURAL_TAG, "{}")


def test_install_replaces_the_named_backend():
    from vllm.v1 import structured_output as so
    import lockstep.vllm

    original = so.GuidanceBackend
    try:
        lockstep.vllm.install("guidance")
        assert so.GuidanceBackend is LockstepBackend
        with pytest.raises(ValueError):
            lockstep.vllm.install("outlines")
    finally:
        so.GuidanceBackend = original
    eps = [e for e in importlib.metadata.entry_points(group="vllm.general_plugins") if e.name == "lockstep"]
    if not eps:
        pytest.skip("lockstep is not pip-installed here, so its vLLM plug-in entry point is not registered")
    assert eps[0].value == "lockstep.vllm:_plugin"
