"""Shared fixtures: the shared data folder (../shared, or $LOCKSTEP_SHARED_DIR) and the
vocabularies the tests use."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import lockstep

ROOT = Path(__file__).resolve().parents[2]


def shared_dir() -> Path:
    env = os.environ.get("LOCKSTEP_SHARED_DIR")
    return Path(env) if env else ROOT.parent / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    d = shared_dir()
    if not (d / "vocab").is_dir():
        pytest.fail(f"the shared data folder is missing: {d} (set LOCKSTEP_SHARED_DIR)")
    return d


@pytest.fixture(scope="session")
def llama3(shared: Path) -> lockstep.TokenizerInfo:
    return lockstep.TokenizerInfo.from_file(str(shared / "vocab/llama3-hf/tokenizer.json"))


@pytest.fixture(scope="session")
def compiler(llama3: lockstep.TokenizerInfo) -> lockstep.GrammarCompiler:
    return lockstep.GrammarCompiler(llama3)
