#!/usr/bin/env python3
"""Stress schemas for large enums and literal sets, in MaskBench's file shape.

    python3 bench/data/gen_enums.py build/stress/enums
    build/lockstep bench maskbench --mode fresh --workers 1 --jsonl out.jsonl build/stress/enums/s5000

Writes one folder per case, each holding one file {"schema": ..., "tests": [one valid
instance]}, so that `bench maskbench` measures each case alone:

  sN    {"type": "string", "enum": [N strings]}: codes, time-zone-like paths, names with
        non-ASCII letters, random words.
  aN    the same enum inside allOf at three properties of one object, beside maxLength,
        type and minLength (the three places should share one automaton).
  anyN  anyOf of N string consts.
  iN    N distinct random integers in [0, 10N).
  iwN   N distinct random integers in ±10^9 (wide: few shared digits).

Deterministic (fixed seed); nothing it writes is meant to be committed. Self-contained: other
scripts may import it and call main(out_dir) or cases().
"""
import json
import os
import random
import sys

SEED = 16
SIZES = {"s": (500, 5000, 50000), "a": (500, 5000, 50000), "any": (500, 5000),
         "i": (500, 5000, 50000), "iw": (500, 5000, 50000)}

_REGIONS = ["Europe", "America", "Asia", "Africa", "Australia", "Pacific", "Atlantic", "Indian"]
_CITIES = ["Paris", "London", "Berlin", "New_York", "Tokyo", "Sao_Paulo", "Mexico_City", "Cairo",
           "Lagos", "Sydney", "Oslo", "Madrid", "Toronto", "Seoul", "Kolkata", "Reykjavik"]
_FIRST = ["Alice", "Bob", "Carol", "David", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy",
          "José", "Zoë", "Søren", "Łukasz"]
_LAST = ["Smith", "Johnson", "Brown", "Garcia", "Miller", "Lopez", "Müller", "Dubois", "Rossi",
         "Kowalski", "Nguyen", "Tanaka", "Silva"]
_COUNTRIES = ["US", "CA", "MX", "BR", "GB", "FR", "DE", "IT", "ES", "NL", "PL", "SE", "JP", "KR",
              "CN", "IN", "AU", "NZ", "ZA", "NG", "KE"]
_UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LOWER = "abcdefghijklmnopqrstuvwxyz"


def strings(rng, n):
    """n distinct strings of four kinds, in the order made."""
    seen, out, i = set(), [], 0
    while len(out) < n:
        kind, i = i % 4, i + 1
        if kind == 0:
            v = f"{rng.choice(_COUNTRIES)}-{rng.choice(_UPPER)}{rng.choice(_UPPER)}"
        elif kind == 1:
            v = f"{rng.choice(_REGIONS)}/{rng.choice(_CITIES)}"
            if rng.random() < 0.8:
                v += f"_{rng.randint(1, 999)}"
        elif kind == 2:
            v = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
            if rng.random() < 0.7:
                v += f" {rng.randint(1, 99)}"
        else:
            v = "".join(rng.choice(_LOWER) for _ in range(rng.randint(4, 12)))
        if v not in seen:
            seen.add(v)
            out.append(v)
    return out


def cases(seed=SEED):
    """Yields (name, schema, valid instance) for every case."""
    rng = random.Random(seed)
    for n in SIZES["s"]:
        vals = strings(rng, n)
        yield f"s{n}", {"type": "string", "enum": vals}, vals[n // 2]
    for n in SIZES["a"]:
        vals = strings(rng, n)
        schema = {"type": "object", "required": ["a"], "properties": {
            "a": {"allOf": [{"type": "string", "maxLength": 40}, {"enum": vals}]},
            "b": {"allOf": [{"type": "string"}, {"enum": vals}]},
            "c": {"allOf": [{"enum": vals}, {"type": "string", "minLength": 1}]}}}
        yield f"a{n}", schema, {"a": vals[1], "b": vals[2], "c": vals[3]}
    for n in SIZES["any"]:
        vals = strings(rng, n)
        yield f"any{n}", {"anyOf": [{"const": v} for v in vals]}, vals[n // 3]
    for n in SIZES["i"]:
        ints = rng.sample(range(0, 10 * n), n)
        yield f"i{n}", {"enum": ints}, ints[0]
    for n in SIZES["iw"]:
        ints = list({rng.randint(-10**9, 10**9) for _ in range(n + n // 10)})[:n]
        rng.shuffle(ints)
        yield f"iw{n}", {"enum": ints}, ints[0]


def main(out_dir):
    for name, schema, instance in cases():
        folder = os.path.join(out_dir, name)
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"{name}.json"), "w", encoding="utf-8") as f:
            json.dump({"schema": schema, "tests": [{"valid": True, "data": instance}]}, f, ensure_ascii=False)
    return out_dir


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: gen_enums.py OUT_DIR")
    main(sys.argv[1])
