"""Fixtures of the integration tests (make test-integrations): the shared data, a Hugging
Face fast tokenizer over the Llama 3 vocabulary, and the bundled model converted to GGUF
by the project's own `lockstep convert`."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def shared() -> Path:
    d = Path(os.environ.get("LOCKSTEP_SHARED_DIR", ROOT.parent / "shared"))
    if not (d / "vocab").is_dir():
        pytest.fail(f"the shared data folder is missing: {d} (set LOCKSTEP_SHARED_DIR)")
    return d


@pytest.fixture(scope="session")
def cli() -> Path:
    path = Path(os.environ.get("LOCKSTEP_CLI", ROOT / "build" / "lockstep"))
    if not path.exists():
        pytest.fail(f"the lockstep CLI is missing: {path} (make build, or set LOCKSTEP_CLI)")
    return path


@pytest.fixture(scope="session")
def llama3_hf(shared: Path):
    from transformers import PreTrainedTokenizerFast
    return PreTrainedTokenizerFast(tokenizer_file=str(shared / "vocab/llama3-hf/tokenizer.json"),
                                   bos_token="<|begin_of_text|>", eos_token="<|eot_id|>")


@pytest.fixture(scope="session")
def bundled_gguf(shared: Path, cli: Path, tmp_path_factory) -> Path:
    """stories260K as GGUF (f32), written by `lockstep convert`."""
    out = tmp_path_factory.mktemp("gguf") / "stories260K.gguf"
    model = shared / "models/stories260K"
    subprocess.run([str(cli), "convert", "-m", str(model / "stories260K.bin"), "--tokenizer", str(model / "tok512.bin"),
                    "-o", str(out)], check=True, capture_output=True)
    return out
