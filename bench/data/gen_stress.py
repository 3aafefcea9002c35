#!/usr/bin/env python3
"""A stress corpus of JSON Schemas unlike the MaskBench development split.

Writes MaskBench-shaped files ({"schema", "tests": [{"valid": true, "data"}]}) into OUT_DIR,
one folder per family, every instance built beside its schema and checked with Python's
jsonschema when it is installed. Deterministic: the same seed writes the same files.

Families (sizes in the file names):
  deep_allof      allOf nested D levels, each level adding properties to one object
  anyof_objects   anyOf of N object variants told apart by a "kind" constant
  optional_props  N optional properties, additionalProperties false
  long_pattern    strings under long regular expressions (alternations, counted repeats)
  dependent       dependentSchemas and dependentRequired over many properties
  pattern_props   patternProperties with several key patterns, additionalProperties false
  defs_graph      $defs graphs of N definitions referring to each other (recursion included)
  enums           large string / integer enums, alone and under allOf (gen_enums.py, when present)

Usage: gen_stress.py OUT_DIR [--seed S]
Then:  build/lockstep bench maskbench --mode fresh OUT_DIR
"""
import argparse
import json
import os
import random
import string
import sys

TYPES = ["string", "integer", "number", "boolean"]


def value_of(rng, t):
    if t == "string":
        return "".join(rng.choice(string.ascii_letters + " éß中") for _ in range(rng.randint(0, 12)))
    if t == "integer":
        return rng.randint(-10**6, 10**6)
    if t == "number":
        return round(rng.uniform(-1000, 1000), rng.randint(0, 4))
    return rng.random() < 0.5


def name(rng, i):
    return "".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 10))) + f"_{i}"


def deep_allof(rng, depth):
    schema = {"type": "object"}
    node, data = schema, {}
    for level in range(depth):
        key = f"level{level}_{name(rng, level)}"
        t = rng.choice(TYPES)
        inner = {"type": "object", "properties": {key: {"type": t}}, "required": [key]}
        data[key] = value_of(rng, t)
        node["allOf"] = [inner, {"type": "object"}]
        node = inner
    return schema, data


def anyof_objects(rng, n):
    variants, data = [], None
    pick = rng.randrange(n)
    for i in range(n):
        props = {"kind": {"const": f"variant_{i}"}}
        instance = {"kind": f"variant_{i}"}
        for j in range(rng.randint(2, 6)):
            t = rng.choice(TYPES)
            k = name(rng, j)
            props[k] = {"type": t}
            instance[k] = value_of(rng, t)
        variants.append({"type": "object", "properties": props, "required": list(props),
                         "additionalProperties": False})
        if i == pick:
            data = instance
    return {"anyOf": variants}, data


def optional_props(rng, n):
    props, data = {}, {}
    for i in range(n):
        t = rng.choice(TYPES)
        k = name(rng, i)
        props[k] = {"type": t}
        if rng.random() < 0.2:
            data[k] = value_of(rng, t)
    return {"type": "object", "properties": props, "additionalProperties": False}, data


def long_pattern(rng, n):
    words = sorted({"".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randint(3, 9))) for _ in range(n)})
    code = rng.choice(words)
    pattern = (r"^[A-Z]{2,4}-\d{3,6}(\.[a-z0-9]{1,8}){0,4}:(" + "|".join(words) + r")(/[A-Za-z_][A-Za-z0-9_]{0,15}){0,6}$")
    value = "ABC-12345.x1.y2:" + code + "/alpha/B_9"
    return ({"type": "object", "properties": {"id": {"type": "string", "pattern": pattern},
                                             "note": {"type": "string", "maxLength": 64}},
             "required": ["id"]}, {"id": value, "note": "ok"})


def dependent(rng, n):
    keys = [name(rng, i) for i in range(n)]
    props = {k: {"type": rng.choice(["string", "integer"])} for k in keys}
    dep_schemas, dep_required = {}, {}
    for i, k in enumerate(keys):
        other = keys[(i + 1) % n]
        if i % 2 == 0:
            dep_schemas[k] = {"properties": {other: {"type": props[other]["type"]}}, "required": [other]}
        else:
            dep_required[k] = [keys[(i + 2) % n]]
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": props, "dependentSchemas": dep_schemas, "dependentRequired": dep_required}
    data = {}
    for k in keys[: max(1, n // 3)]:
        data[k] = value_of(rng, props[k]["type"])
    # Close the dependencies of what is present.
    changed = True
    while changed:
        changed = False
        for k in list(data):
            need = dep_schemas.get(k, {}).get("required", []) + dep_required.get(k, [])
            for o in need:
                if o not in data:
                    data[o] = value_of(rng, props[o]["type"])
                    changed = True
    return schema, data


def pattern_props(rng, n):
    pats, data = {}, {}
    for i in range(n):
        prefix = "".join(rng.choice(string.ascii_lowercase) for _ in range(3)) + str(i)
        t = rng.choice(TYPES)
        pats[f"^{prefix}_[a-z]{{1,6}}$"] = {"type": t}
        if rng.random() < 0.5:
            data[f"{prefix}_abc"] = value_of(rng, t)
    return {"type": "object", "patternProperties": pats, "additionalProperties": False}, data


def defs_graph(rng, n):
    defs = {}
    for i in range(n):
        props = {}
        for j in range(rng.randint(1, 4)):
            props[f"f{j}"] = {"type": rng.choice(TYPES)}
        # Each definition may refer to later ones (a DAG), and some to an earlier one
        # through an optional array (recursion).
        for j in range(rng.randint(0, 2)):
            target = rng.randrange(i + 1, n) if i + 1 < n else None
            if target is not None:
                props[f"r{j}"] = {"$ref": f"#/$defs/d{target}"}
        if i > 0 and rng.random() < 0.3:
            props["back"] = {"type": "array", "items": {"$ref": f"#/$defs/d{rng.randrange(i)}"}, "maxItems": 2}
        defs[f"d{i}"] = {"type": "object", "properties": props, "required": [k for k in props if k.startswith("f")]}

    def instance(i, depth):
        out = {}
        for k, p in defs[f"d{i}"]["properties"].items():
            if k.startswith("f"):
                out[k] = value_of(rng, p["type"])
            elif k.startswith("r") and depth < 4:
                out[k] = instance(int(p["$ref"].rsplit("d", 1)[1]), depth + 1)
        return out

    return {"$defs": defs, "$ref": "#/$defs/d0"}, instance(0, 0)


FAMILIES = {
    "deep_allof": (deep_allof, [8, 32, 64]),
    "anyof_objects": (anyof_objects, [10, 50, 200]),
    "optional_props": (optional_props, [50, 200, 800]),
    "long_pattern": (long_pattern, [20, 200, 2000]),
    "dependent": (dependent, [10, 40, 120]),
    "pattern_props": (pattern_props, [5, 20, 60]),
    "defs_graph": (defs_graph, [20, 100, 400]),
}


def main(out_dir, seed=16, per_size=3):
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
        print("gen_stress: jsonschema is not installed; instances are not checked", file=sys.stderr)
    written = 0
    for family, (make, sizes) in FAMILIES.items():
        folder = os.path.join(out_dir, family)
        os.makedirs(folder, exist_ok=True)
        for size in sizes:
            for k in range(per_size):
                rng = random.Random(f"{seed}/{family}/{size}/{k}")
                schema, data = make(rng, size)
                if jsonschema is not None:
                    jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)(schema).validate(data)
                with open(os.path.join(folder, f"{family}_{size}_{k}.json"), "w", encoding="utf-8") as f:
                    json.dump({"schema": schema, "tests": [{"description": "generated", "valid": True, "data": data}]},
                              f, ensure_ascii=False)
                written += 1
    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.exists(os.path.join(here, "gen_enums.py")):
        sys.path.insert(0, here)
        import gen_enums
        gen_enums.main(os.path.join(out_dir, "enums"))
    print(f"gen_stress: {written} files in {out_dir}" + (" (and enums/)" if os.path.exists(os.path.join(out_dir, "enums")) else ""))


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--seed", type=int, default=16)
    a = ap.parse_args()
    main(a.out_dir, a.seed)
