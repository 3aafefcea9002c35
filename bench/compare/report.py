"""Tables for bench/compare's results (one JSON line per schema and engine, in --out)."""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np

STATUSES = ["pass", "compile_error", "validation_error", "invalidation_error", "crash", "timeout"]
NOT_COMPILED = ("compile_error", "crash", "timeout")  # no time to a first mask
HEADER = ("engine", "files", "pass", "compile", "valid rej", "invalid acc", "crash", "timeout",
          "mask avg", "p50", "p99", "max", "TTFM p50", "TTFM p99", "RSS p50")


def slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def pct(values: np.ndarray, q: float) -> float:
    """Nearest rank, as `lockstep bench maskbench` computes it."""
    if values.size == 0:
        return float("nan")
    i = min(values.size - 1, int(q * (values.size - 1) + 0.5))
    return float(np.partition(values, i)[i])


def figures(rows: list[dict]) -> dict:
    masks = np.array([x for r in rows for x in r.get("mask_us", [])], dtype=np.float64)
    compiled = [r for r in rows if r["status"] not in NOT_COMPILED]
    ttfm = np.array([r["ttfm_us"] for r in compiled], dtype=np.float64)
    rss = np.array([r["max_rss_kib"] for r in rows if "max_rss_kib" in r], dtype=np.float64)
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    return {"files": len(rows), **counts, "tokens": int(masks.size),
            "mask_avg": float(masks.mean()) if masks.size else float("nan"),
            "mask_p50": pct(masks, .5), "mask_p99": pct(masks, .99), "mask_max": pct(masks, 1),
            "ttfm_p50": pct(ttfm, .5), "ttfm_p99": pct(ttfm, .99), "rss_p50": pct(rss, .5)}


def _fmt_us(x: float) -> str:
    return "-" if x != x else (f"{x:,.1f}" if x < 1000 else f"{x:,.0f}")


def _fmt_ms(x: float) -> str:
    return "-" if x != x else f"{x / 1000:,.2f}"


def table(title: str, by_label: dict[str, list[dict]]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for label, rows in by_label.items():
        f = figures(rows)
        rss = "-" if f["rss_p50"] != f["rss_p50"] else f"{f['rss_p50'] / 1024:,.0f} MiB"
        cells = [label, f["files"], f["pass"], f["compile_error"], f["validation_error"],
                 f["invalidation_error"], f["crash"], f["timeout"], _fmt_us(f["mask_avg"]),
                 _fmt_us(f["mask_p50"]), _fmt_us(f["mask_p99"]), _fmt_us(f["mask_max"]),
                 _fmt_ms(f["ttfm_p50"]), _fmt_ms(f["ttfm_p99"]), rss]
        print("| " + " | ".join(str(c) for c in cells) + " |")


def ratios(results: dict[str, dict[str, dict]]) -> None:
    """Each peer's figure over lockstep's (above 1: lockstep is faster), on the files both
    pass, so both engines saw the same token sequences."""
    if "lockstep" not in results:
        return
    ours = results["lockstep"]
    keys = [("mask_avg", "mask avg"), ("mask_p50", "mask p50"), ("mask_p99", "mask p99"),
            ("mask_max", "mask max"), ("ttfm_p50", "TTFM p50"), ("ttfm_p99", "TTFM p99")]
    print("\n### Ratios: peer / lockstep on the files both pass (above 1: lockstep is faster)\n")
    print("| peer | files both pass | " + " | ".join(k[1] for k in keys) + " |")
    print("|" + "---|" * (len(keys) + 2))
    for label, theirs in results.items():
        if label == "lockstep":
            continue
        common = [f for f, r in theirs.items() if r["status"] == "pass" and ours.get(f, {}).get("status") == "pass"]
        if not common:
            print(f"| {label} | 0 |" + " - |" * len(keys))
            continue
        a = figures([ours[f] for f in common])
        b = figures([theirs[f] for f in common])
        cells = [f"{b[k] / a[k]:.2f}" if a[k] > 0 else "-" for k, _ in keys]
        print(f"| {label} | {len(common)} | " + " | ".join(cells) + " |")


def ttfm_tail(results: dict[str, dict[str, dict]], n: int = 8) -> None:
    """lockstep's `n` slowest files to a first mask, with every engine's time on each: the
    files that set lockstep's TTFM p99 and how the peers fare on them."""
    if "lockstep" not in results:
        return
    ours = results["lockstep"]
    timed = [(r["ttfm_us"], f) for f, r in ours.items() if r["status"] not in NOT_COMPILED]
    if not timed:
        return
    labels = list(results)
    print(f"\n### Time to first mask: lockstep's {min(n, len(timed))} slowest files (ms; status where not compiled)\n")
    print("| file | " + " | ".join(labels) + " |")
    print("|" + "---|" * (len(labels) + 1))
    for _, file in sorted(timed, reverse=True)[:n]:
        cells = []
        for label in labels:
            r = results[label].get(file)
            if r is None:
                cells.append("-")
            elif r["status"] in NOT_COMPILED:
                cells.append(r["status"])
            else:
                cells.append(_fmt_ms(r["ttfm_us"]))
        print(f"| {file} | " + " | ".join(cells) + " |")


def print_report(out: Path) -> None:
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    results: dict[str, dict[str, dict]] = {}
    for label in run["labels"]:
        with open(out / f"{slug(label)}.jsonl", encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        results[label] = {r["file"]: r for r in rows}
    print("## bench/compare: MaskBench protocol, Llama 3 tokenizer\n")
    print(f"{run['files']} files (sample {run['sample'] or 'all'}, seed {run['seed']}); "
          f"{run['time_limit_s']:g} s and {run['mem_limit_gib']:g} GiB per schema; "
          f"{run['jobs']} schemas at once, one thread each; Python {run['python']}.")
    print("Times in µs per token (the mask and the commit of the token), time to first mask "
          "(compile + first mask) in ms; RSS: peak resident memory of a schema's process.\n")
    for label in run["labels"]:
        print(f"- {label} {run['versions'][label]}")
    subsets: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for label, rows in results.items():
        for file, r in rows.items():
            subsets[file.split("/")[0]][label].append(r)
    for name in sorted(subsets):
        table(name, subsets[name])
    table("Total", {label: list(rows.values()) for label, rows in results.items()})
    ratios(results)
    ttfm_tail(results)
