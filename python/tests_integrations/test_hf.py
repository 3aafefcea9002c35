"""lockstep.hf logits processors inside Hugging Face transformers' own generate(), on the
bundled model loaded by transformers from the GGUF file `lockstep convert` writes: outputs
validate with Python's jsonschema, and greedy decoding picks the same tokens as
`lockstep generate` under the same schema."""

from __future__ import annotations

import json
import re
import subprocess

import jsonschema
import pytest
import torch

transformers = pytest.importorskip("transformers")

import lockstep  # noqa: E402
import lockstep.hf  # noqa: E402

PROMPT = "Once upon a time"
SCHEMA = {"type": "object",
          "properties": {"name": {"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 1}},
          "required": ["name", "age"], "additionalProperties": False}
STOP_IDS = [2]  # EOS: the one end-of-generation id of the GGUF vocabulary `lockstep convert` writes


@pytest.fixture(scope="module")
def model_and_tokenizer(bundled_gguf):
    tok = transformers.AutoTokenizer.from_pretrained(str(bundled_gguf.parent), gguf_file=bundled_gguf.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(bundled_gguf.parent), gguf_file=bundled_gguf.name)
    model.eval()
    return model, tok


def prompt_ids(tok) -> torch.Tensor:
    # lockstep generate puts BOS first, as llama2.c's run.c does.
    return torch.tensor([[tok.bos_token_id] + tok.encode(PROMPT, add_special_tokens=False)])


def processor(tok, model, max_new_tokens, **options):
    info = lockstep.TokenizerInfo.from_huggingface(tok, vocab_size=model.config.vocab_size, stop_token_ids=STOP_IDS)
    compiler = lockstep.GrammarCompiler(info)
    return lockstep.hf.JsonSchemaLogitsProcessor(SCHEMA, compiler=compiler, max_new_tokens=max_new_tokens,
                                                 whitespace="compact", canonical_numbers=True, **options)


def test_greedy_tokens_equal_lockstep_generate(model_and_tokenizer, cli, bundled_gguf, tmp_path):
    model, tok = model_and_tokenizer
    n = 48
    ids = prompt_ids(tok)
    out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=n,
                         logits_processor=[processor(tok, model, n)], eos_token_id=STOP_IDS, pad_token_id=0)
    hf_tokens = out[0, ids.shape[1]:].tolist()
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA))
    run = subprocess.run([str(cli), "generate", "-m", str(bundled_gguf), "-p", PROMPT, "--schema", str(schema_file),
                          "--whitespace", "compact", "--temperature", "0", "-n", str(n), "--no-jump-forward", "--json"],
                         check=True, capture_output=True, text=True)
    ours = json.loads(run.stdout)
    assert ours["complete"]
    assert hf_tokens == ours["token_ids"], (tok.decode(hf_tokens), ours["text"])
    assert hf_tokens[-1] in STOP_IDS
    text = tok.decode(hf_tokens[:-1], skip_special_tokens=True)
    jsonschema.validate(json.loads(text), SCHEMA)


def test_sampled_outputs_validate(model_and_tokenizer):
    model, tok = model_and_tokenizer
    ids = prompt_ids(tok)
    for seed in range(6):
        torch.manual_seed(seed)
        out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=True, temperature=1.0, top_k=0,
                             max_new_tokens=40, logits_processor=[processor(tok, model, 40)], eos_token_id=STOP_IDS,
                             pad_token_id=0)
        new = out[0, ids.shape[1]:].tolist()
        assert new[-1] in STOP_IDS, tok.decode(new)
        jsonschema.validate(json.loads(tok.decode(new[:-1], skip_special_tokens=True)), SCHEMA)


def test_beam_search_and_several_sequences(model_and_tokenizer):
    model, tok = model_and_tokenizer
    ids = prompt_ids(tok)
    out = model.generate(ids, attention_mask=torch.ones_like(ids), num_beams=3, num_return_sequences=3,
                         do_sample=False, max_new_tokens=40, logits_processor=[processor(tok, model, 40)],
                         eos_token_id=STOP_IDS, pad_token_id=0)
    for row in out:
        new = [t for t in row[ids.shape[1]:].tolist() if t not in STOP_IDS and t != 0]
        jsonschema.validate(json.loads(tok.decode(new, skip_special_tokens=True)), SCHEMA)


def test_regex_and_grammar_processors(model_and_tokenizer):
    model, tok = model_and_tokenizer
    ids = prompt_ids(tok)
    info = lockstep.TokenizerInfo.from_huggingface(tok, vocab_size=model.config.vocab_size, stop_token_ids=STOP_IDS)
    compiler = lockstep.GrammarCompiler(info)
    pattern = r"(Lily|Tom) (is|was) [0-9]{1,2}\."
    proc = lockstep.hf.RegexLogitsProcessor(pattern, compiler=compiler, max_new_tokens=24)
    out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=24,
                         logits_processor=[proc], eos_token_id=STOP_IDS, pad_token_id=0)
    text = tok.decode([t for t in out[0, ids.shape[1]:].tolist() if t not in STOP_IDS], skip_special_tokens=True)
    assert re.fullmatch(pattern, text), text
    proc = lockstep.hf.GrammarLogitsProcessor('root ::= "The " ("cat" | "dog") " sat."', compiler=compiler,
                                              max_new_tokens=16)
    out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False, max_new_tokens=16,
                         logits_processor=[proc], eos_token_id=STOP_IDS, pad_token_id=0)
    text = tok.decode([t for t in out[0, ids.shape[1]:].tolist() if t not in STOP_IDS], skip_special_tokens=True)
    assert text in ("The cat sat.", "The dog sat."), text
