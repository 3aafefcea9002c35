"""One engine's host process for bench/compare.

Loads the engine and its vocabulary once, then reads one request per line on stdin
({"file", "schema", "tests": [{"valid", "tokens"}]}) and writes one result per line on stdout.

Fresh mode (default): every schema runs in a child forked for it, so no grammar-level cache
survives from one schema to the next, with an address-space limit and a wall-clock limit; the
vocabulary was loaded before the fork, before any clock started, and the child makes its
private writable memory its own before the clock (own_private_memory). Service mode (--service): the
schemas run one after another in this process, with whatever the engine keeps between them.

Per schema: time to first mask = compile + first matcher + first mask. Per token: the mask and the
commit of the token, timed together as MaskBench times them. After the last token, one more
mask, then the engine says whether the output is complete. A valid instance must pass every
mask and end complete; an invalid one must be stopped somewhere.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import select
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engines  # noqa: E402


def run_schema(engine: engines.Engine, request: dict) -> dict:
    r = {"status": "pass", "ttfm_us": 0.0, "mask_us": [], "tokens": 0, "error": ""}
    clock = time.perf_counter
    t0 = clock()
    try:
        engine.compile(request["schema"])
        engine.start()
        engine.fill()
    except Exception as e:  # noqa: BLE001 - any engine error is this schema's compile error
        r["status"] = "compile_error"
        r["error"] = f"{type(e).__name__}: {e}"[:300]
        return r
    r["ttfm_us"] = (clock() - t0) * 1e6
    masks = r["mask_us"]
    for n, test in enumerate(request["tests"]):
        try:
            if n > 0:
                engine.start()
                t = clock()
                engine.fill()
                masks.append((clock() - t) * 1e6)
            stopped = False
            for token in test["tokens"]:
                if not engine.allowed(token):
                    stopped = True
                    break
                t = clock()
                ok = engine.accept(token)
                if ok:
                    engine.fill()
                masks.append((clock() - t) * 1e6)
                r["tokens"] += 1
                if not ok:
                    stopped = True
                    break
            if not stopped:
                stopped = not engine.accepting()
        except Exception as e:  # noqa: BLE001
            r["status"] = "crash"
            r["error"] = f"test {n}: {type(e).__name__}: {e}"[:300]
            return r
        if test["valid"] and stopped:
            r["status"] = "validation_error"
            r["error"] = f"test {n}: a valid instance was rejected"
            return r
        if not test["valid"] and not stopped:
            r["status"] = "invalidation_error"
            r["error"] = f"test {n}: an invalid instance was accepted"
            return r
    return r


MADV_POPULATE_WRITE = 23  # Linux 5.14


def own_private_memory() -> None:
    """Copies into this forked child every private writable page it shares with its parent.

    A forked child shares the host's memory copy-on-write, so its first write to each page the
    host had written (the heap left by loading the engine and vocabulary, Python objects whose
    reference counts change) costs a fault and a page copy that a process which loaded the
    vocabulary itself would not pay, and that would fall inside the clock. madvise with
    MADV_POPULATE_WRITE does them all at once, before the clock; on a kernel without it,
    nothing is done. The same for every engine (docs/masks.md, "Cold start").
    """
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        madvise = libc.madvise
        madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        with open("/proc/self/smaps") as smaps:
            lines = smaps.read().splitlines()
    except (OSError, AttributeError):
        return
    # Mappings with pages the host wrote ("Anonymous" above 0): the others are shared with
    # nothing a fresh process would not share too. Mappings over 1 GiB are reservations (a
    # sanitizer's shadow memory) that populating would commit whole.
    span, perms = None, ""
    for line in lines:
        fields = line.split()
        if len(fields) > 1 and "-" in fields[0] and len(fields[1]) == 4:
            span, perms = fields[0], fields[1]
        elif fields and fields[0] == "Anonymous:" and span and int(fields[1]) > 0:
            lo, hi = (int(x, 16) for x in span.split("-"))
            if perms[0] == "r" and perms[1] == "w" and perms[3] == "p" and hi - lo <= 1 << 30:
                madvise(lo, hi - lo, MADV_POPULATE_WRITE)


def run_forked(engine: engines.Engine, request: dict, time_limit: float, mem_limit: int) -> dict:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            own_private_memory()
            if mem_limit:
                resource.setrlimit(resource.RLIMIT_AS, (mem_limit, mem_limit))
            out = json.dumps(run_schema(engine, request)).encode()
        except BaseException as e:  # noqa: BLE001 - reported, then this child ends
            out = json.dumps({"status": "crash", "error": f"{type(e).__name__}: {e}"[:300]}).encode()
        with os.fdopen(write_end, "wb") as f:
            f.write(out)
        os._exit(0)
    os.close(write_end)
    chunks: list[bytes] = []
    deadline = time.monotonic() + time_limit
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([read_end], [], [], left)
        if ready:
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    os.close(read_end)
    _, status, usage = os.wait4(pid, 0)
    if timed_out:
        r = {"status": "timeout", "error": f"no result within {time_limit:g} s"}
    elif not chunks:
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
        r = {"status": "crash", "error": f"the process died ({how})"}
    else:
        r = json.loads(b"".join(chunks))
    r["max_rss_kib"] = usage.ru_maxrss
    return r


def address_space_limit(extra_gib: float) -> int:
    """RLIMIT_AS for a schema's process: what this process already maps (libraries, the
    vocabulary) plus `extra_gib`; 0 (no limit) when `extra_gib` is 0."""
    if not extra_gib:
        return 0
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * resource.getpagesize()
    return mapped + int(extra_gib * (1 << 30))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("engine", choices=sorted(engines.ENGINES))
    p.add_argument("--tokenizer", required=True, help="Llama 3 tokenizer.json")
    p.add_argument("--gguf-vocab", default="", help="vocabulary-only GGUF (llama.cpp)")
    p.add_argument("--service", action="store_true", help="run every schema in this process")
    p.add_argument("--time-limit", type=float, default=60, help="seconds per schema")
    p.add_argument("--mem-limit-gib", type=float, default=8,
                   help="address space a schema's process may add, GiB (0: none)")
    a = p.parse_args()

    engine = engines.make(a.engine)
    engine.load(a.tokenizer, a.gguf_vocab)
    engine.keep_compiler = a.service
    mem_limit = address_space_limit(a.mem_limit_gib)
    print(json.dumps({"ready": engine.name, "version": engine.version()}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        if a.service:
            r = run_schema(engine, request)
        else:
            r = run_forked(engine, request, a.time_limit, mem_limit)
        r["file"] = request["file"]
        print(json.dumps(r), flush=True)


if __name__ == "__main__":
    main()
