"""bench/compare's protocol: outcomes, limits, sampling and the report's figures, with
lockstep as the engine and with stand-in engines that fail in each way a peer can."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench/compare"))

import engines  # noqa: E402
import host  # noqa: E402
import report  # noqa: E402
import run  # noqa: E402

SCHEMA = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
                     "additionalProperties": False})


@pytest.fixture(scope="module")
def engine(shared: Path) -> engines.Engine:
    e = engines.make("lockstep")
    e.load(str(shared / "vocab/llama3-hf/tokenizer.json"), "")
    return e


def request(engine: engines.Engine, tests: list[tuple[bool, object]], schema: str = SCHEMA) -> dict:
    return {"file": "x/y.json", "schema": schema,
            "tests": [{"valid": v, "tokens": engine.info.encode(json.dumps(d))} for v, d in tests]}


def test_valid_and_invalid_instances_pass(engine):
    r = host.run_schema(engine, request(engine, [(True, {"n": 12}), (False, {"n": "x"}), (False, {})]))
    assert r["status"] == "pass", r["error"]
    assert r["ttfm_us"] > 0
    # One mask per accepted token, plus the first mask of each instance after the first.
    assert len(r["mask_us"]) == r["tokens"] + 2


def test_a_rejected_valid_instance_is_a_validation_error(engine):
    r = host.run_schema(engine, request(engine, [(True, {"n": 1.5})]))
    assert r["status"] == "validation_error"


def test_an_incomplete_instance_is_not_accepted(engine):
    # '{"n": 1' is a prefix of valid outputs: every token passes, but the output may not end.
    r = host.run_schema(engine, {"file": "x", "schema": SCHEMA,
                                 "tests": [{"valid": False, "tokens": engine.info.encode('{"n": 1')}]})
    assert r["status"] == "pass"
    r = host.run_schema(engine, {"file": "x", "schema": SCHEMA,
                                 "tests": [{"valid": True, "tokens": engine.info.encode('{"n": 1')}]})
    assert r["status"] == "validation_error"


def test_an_accepted_invalid_instance_is_an_invalidation_error(engine):
    loose = json.dumps({"type": "object"})
    r = host.run_schema(engine, request(engine, [(False, {"n": "x"})], schema=loose))
    assert r["status"] == "invalidation_error"


def test_a_refused_schema_is_a_compile_error(engine):
    r = host.run_schema(engine, request(engine, [], schema=json.dumps({"type": "integer", "minimum": "x"})))
    assert r["status"] == "compile_error" and r["error"]


class Hangs(engines.Engine):
    def compile(self, schema_text):
        while True:
            pass


class Dies(engines.Engine):
    def compile(self, schema_text):
        os._exit(3)


class Grows(engines.Engine):
    def compile(self, schema_text):
        self.hoard = bytearray(1 << 30)


def test_a_schema_past_its_time_limit_is_a_timeout():
    r = host.run_forked(Hangs(), {"schema": "{}", "tests": []}, time_limit=0.5, mem_limit=0)
    assert r["status"] == "timeout"


def test_a_schema_that_kills_its_process_is_a_crash():
    r = host.run_forked(Dies(), {"schema": "{}", "tests": []}, time_limit=10, mem_limit=0)
    assert r["status"] == "crash" and "exit 3" in r["error"]


def test_the_memory_limit_stops_an_engine_that_grows():
    r = host.run_forked(Grows(), {"schema": "{}", "tests": []}, time_limit=10,
                        mem_limit=host.address_space_limit(0.25))
    assert r["status"] == "compile_error" and "MemoryError" in r["error"]


def test_forked_results_match_in_process_results(engine):
    req = request(engine, [(True, {"n": 7}), (False, [])])
    a = host.run_schema(engine, req)
    b = host.run_forked(engine, req, time_limit=30, mem_limit=0)
    assert (a["status"], a["tokens"]) == (b["status"], b["tokens"]) == ("pass", a["tokens"])
    assert b["max_rss_kib"] > 0


def test_the_sample_takes_every_subset_in_proportion(tmp_path):
    sizes = {"big": 300, "mid": 60, "small": 5}
    for name, n in sizes.items():
        (tmp_path / name).mkdir()
        for i in range(n):
            (tmp_path / name / f"{i}.json").write_text("{}")
    files = run.sample_files(tmp_path, 100, seed=1)
    by = {name: sum(f.parent.name == name for f in files) for name in sizes}
    assert by == {"big": 82, "mid": 20, "small": 5}  # 100·300/365, the floor of 20, all 5
    assert files == run.sample_files(tmp_path, 100, seed=1)
    assert files != run.sample_files(tmp_path, 100, seed=2)
    assert len(run.sample_files(tmp_path, 0, seed=1)) == 365


def test_report_figures_and_ratios(capsys):
    rows = [{"status": "pass", "ttfm_us": t, "mask_us": [1.0, 2.0, 3.0, 4.0]} for t in (100.0, 300.0)]
    rows.append({"status": "compile_error", "ttfm_us": 0.0, "mask_us": []})
    f = report.figures(rows)
    assert (f["pass"], f["compile_error"], f["tokens"]) == (2, 1, 8)
    assert f["mask_avg"] == 2.5 and f["mask_max"] == 4.0 and f["mask_p50"] == 3.0
    assert f["ttfm_p50"] == 300.0  # nearest rank over the two compiled schemas
    assert report.pct(np.array([5.0]), 0.99) == 5.0

    ours = {"a": {"status": "pass", "ttfm_us": 100.0, "mask_us": [2.0]},
            "b": {"status": "pass", "ttfm_us": 100.0, "mask_us": [2.0]}}
    theirs = {"a": {"status": "pass", "ttfm_us": 300.0, "mask_us": [8.0]},
              "b": {"status": "compile_error", "ttfm_us": 0.0, "mask_us": []}}
    report.ratios({"lockstep": ours, "peer": theirs})
    line = capsys.readouterr().out.splitlines()[-1]
    assert line == "| peer | 1 | 4.00 | 4.00 | 4.00 | 4.00 | 3.00 | 3.00 |"
