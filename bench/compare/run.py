#!/usr/bin/env python3
"""bench/compare: lockstep side by side with the field on MaskBench files, in one run.

Every engine gets the same files and the same token sequences (each instance serialized as
MaskBench does, json.dumps with ensure_ascii=False, tokenized with the Llama 3 tokenizer by
Hugging Face `tokenizers`). Each engine runs in host processes that load its vocabulary once;
each schema then runs in a process forked for it (fresh mode: no grammar cache carried from
one schema to the next, a time and an address-space limit, one thread). With --service,
lockstep also runs as a long-lived service would, one process keeping its caches, labelled
"lockstep (service)". Files are interleaved across engines, so a change in the machine's load
falls on every engine alike.

Prints the versions, one table per subset and one for the total, and lockstep's ratios.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
import report  # noqa: E402
from engines import ENGINES  # noqa: E402

SHARED = Path(os.environ.get("LOCKSTEP_SHARED_DIR", ROOT.parent / "shared"))
DEFAULT_ENGINES = "lockstep,xgrammar,llguidance,outlines-core,llama.cpp"


def sample_files(data: Path, n: int, seed: int) -> list[Path]:
    """`n` files (all when n <= 0), from every subset in proportion to its size, at least 20 or
    the whole subset from each; a fixed seed gives the same sample on every machine."""
    subsets = {d.name: sorted(d.glob("*.json")) for d in sorted(data.iterdir()) if d.is_dir()}
    subsets = {k: v for k, v in subsets.items() if v}
    total = sum(len(v) for v in subsets.values())
    if n <= 0 or n >= total:
        return [f for v in subsets.values() for f in v]
    rng = random.Random(seed)
    chosen = []
    for name, files in subsets.items():
        k = min(len(files), max(20, round(n * len(files) / total)))
        chosen.extend(sorted(rng.sample(files, k)))
    return chosen


def make_request(path: Path, tokenizer) -> str:
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    tests = []
    for t in spec.get("tests", []):
        text = json.dumps(t["data"], ensure_ascii=False)
        tests.append({"valid": bool(t["valid"]), "tokens": tokenizer.encode(text, add_special_tokens=False).ids})
    return json.dumps({"file": f"{path.parent.name}/{path.name}",
                       "schema": json.dumps(spec["schema"], ensure_ascii=False), "tests": tests})


class Host:
    """One engine host process; restarted when it dies or a service-mode schema overruns."""

    def __init__(self, label: str, argv: list[str], time_limit: float, log: Path):
        self.label, self.argv, self.time_limit, self.log = label, argv, time_limit, log
        self.version = ""
        self._start()

    def _start(self):
        env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   TOKENIZERS_PARALLELISM="false")
        # Engines log warnings per schema; they go to the engine's log, not to the terminal.
        with open(self.log, "a", encoding="utf-8") as log:
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=log, text=True, env=env)
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{self.label}: the engine did not load; see {self.log}")
        self.version = json.loads(line)["version"]

    def run(self, request: str, file: str) -> dict:
        result: list[str] = []

        def talk():
            try:
                self.proc.stdin.write(request + "\n")
                self.proc.stdin.flush()
                result.append(self.proc.stdout.readline())
            except (BrokenPipeError, ValueError):
                pass

        t = threading.Thread(target=talk, daemon=True)
        t.start()
        # Fresh mode enforces the limit in the host; this guards against a host that hangs.
        t.join(self.time_limit + 30)
        if t.is_alive() or not result or not result[0]:
            timed_out = t.is_alive()
            self.proc.kill()
            self.proc.wait()
            self._start()
            status = "timeout" if timed_out else "crash"
            return {"file": file, "status": status, "error": "the engine's host process " +
                    ("overran the time limit" if timed_out else "died")}
        return json.loads(result[0])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", default=str(SHARED / "schemas/jsonschemabench"),
                   help="MaskBench folder (one sub-folder per subset)")
    p.add_argument("--tokenizer", default=str(SHARED / "vocab/llama3-hf/tokenizer.json"))
    p.add_argument("--gguf-vocab", default=str(ROOT / "build/compare/llama3-vocab.gguf"),
                   help="vocabulary-only GGUF for llama.cpp (written from --tokenizer when missing)")
    p.add_argument("--engines", default=DEFAULT_ENGINES, help="comma-separated")
    p.add_argument("--service", action="store_true",
                   help='also run "lockstep (service)": one process, caches kept across schemas')
    p.add_argument("--sample", type=int, default=1700, help="files to sample; 0 for every file")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=2, help="schemas measured at once (one per core)")
    p.add_argument("--time-limit", type=float, default=60, help="seconds per schema")
    p.add_argument("--mem-limit-gib", type=float, default=8, help="GiB per schema's process")
    p.add_argument("--out", default=str(ROOT / "build/compare"), help="results folder")
    p.add_argument("--report-only", action="store_true", help="print the tables from --out")
    a = p.parse_args()

    out = Path(a.out)
    if a.report_only:
        report.print_report(out)
        return 0
    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    unknown = [e for e in engines if e not in ENGINES]
    if unknown or not engines:
        p.error(f"--engines: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(ENGINES)}")
    labels = engines + (["lockstep (service)"] if a.service else [])
    if "llama.cpp" in engines and not Path(a.gguf_vocab).exists():
        subprocess.run([sys.executable, str(HERE / "gguf_vocab.py"), a.tokenizer, a.gguf_vocab],
                       check=True)

    from tokenizers import Tokenizer
    tokenizer = Tokenizer.from_file(a.tokenizer)
    files = sample_files(Path(a.data), a.sample, a.seed)
    print(f"compare: {len(files)} files, engines: {', '.join(labels)}; "
          f"{a.time_limit:g} s and {a.mem_limit_gib:g} GiB per schema, {a.jobs} at once", file=sys.stderr)

    def argv(label):
        name = "lockstep" if label == "lockstep (service)" else label
        cmd = [sys.executable, str(HERE / "host.py"), name, "--tokenizer", a.tokenizer,
               "--gguf-vocab", a.gguf_vocab, "--time-limit", str(a.time_limit),
               "--mem-limit-gib", str(a.mem_limit_gib)]
        return cmd + (["--service"] if label == "lockstep (service)" else [])

    out.mkdir(parents=True, exist_ok=True)
    for label in labels:
        (out / f"{report.slug(label)}.log").unlink(missing_ok=True)
    hosts = [{label: Host(label, argv(label), a.time_limit, out / f"{report.slug(label)}.log")
              for label in labels} for _ in range(a.jobs)]
    versions = {label: hosts[0][label].version for label in labels}
    commit = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"],
                            capture_output=True, text=True).stdout.strip()
    for label in labels:
        if label.startswith("lockstep") and commit:
            versions[label] += f" ({commit})"
    # Written first, so --report-only can print what a cut-short run measured.
    with open(out / "run.json", "w", encoding="utf-8") as f:
        json.dump({"versions": versions, "labels": labels, "files": len(files),
                   "sample": a.sample, "seed": a.seed, "time_limit_s": a.time_limit,
                   "mem_limit_gib": a.mem_limit_gib, "jobs": a.jobs,
                   "python": sys.version.split()[0]}, f, indent=1)
    sinks = {label: open(out / f"{report.slug(label)}.jsonl", "w", encoding="utf-8") for label in labels}
    lock = threading.Lock()
    queue = list(enumerate(files))
    done = [0]
    started = time.monotonic()

    def worker(mine: dict):
        while True:
            with lock:
                if not queue:
                    return
                i, path = queue.pop(0)
            request = make_request(path, tokenizer)
            file = f"{path.parent.name}/{path.name}"
            # Each file's engines in a rotating order, so none is always first after a fork.
            order = labels[i % len(labels):] + labels[:i % len(labels)]
            results = {label: mine[label].run(request, file) for label in order}
            with lock:
                for label, r in results.items():
                    sinks[label].write(json.dumps(r) + "\n")
                done[0] += 1
                if done[0] % 50 == 0 or done[0] == len(files):
                    elapsed = time.monotonic() - started
                    eta = elapsed / done[0] * (len(files) - done[0])
                    print(f"compare: {done[0]} / {len(files)} files, {elapsed / 60:.1f} min, "
                          f"about {eta / 60:.0f} min left", file=sys.stderr, flush=True)

    threads = [threading.Thread(target=worker, args=(h,)) for h in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sink in sinks.values():
        sink.close()
    for h in hosts:
        for host in h.values():
            host.close()
    report.print_report(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
