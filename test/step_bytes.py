#!/usr/bin/env python3
"""Bytes a run of a doccc library writes, by kind, from its SDFG before expansion.

    python3 test/step_bytes.py DUMP_DIR [SYM=N ...]

DUMP_DIR is what `doccc MODEL --dump-sdfg DUMP_DIR` wrote; the stage after
the state pass ("stated") is read, where every step is still one library
node. SYM=N gives a run-time dim its value (a decode step: the sequence
length 1). By ir.h's invariant every container is written once per run,
so a run writes each library node's outputs once: the state it updates in
place only where it changes (a scatter's rows: the size of its values),
any other state whole, and every transient and output whole (an upper
bound: fusion later keeps some transients in registers; a lower one too:
the copies an expansion makes inside a step, such as attention's transposed
keys, are not library nodes yet). Prints the bytes
per kind and the state's largest writes, and with --json one object.
"""
import json
import re
import sys
from pathlib import Path

SIZES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int64": 8, "int32": 4, "int16": 2, "int8": 1,
         "uint8": 1, "bool": 1}


def numel(shape, dims):
    n = 1
    for e in shape:
        n *= int(eval(re.sub(r"//", "//", e), {"Max": max, "Min": min}, dims))
    return n


def step_bytes(dump_dir, dims):
    stage = sorted(Path(dump_dir).glob("*-stated.json"))
    if not stage:
        sys.exit(f"{dump_dir}: no *-stated.json (doccc --dump-sdfg DIR writes it)")
    g = json.loads(stage[-1].read_text())
    cs = {c["name"]: c for c in g["containers"]}
    byid = {c["id"]: c for c in g["containers"]}
    root = lambda c: byid[c["base"]] if c["kind"] == "view" else c
    size = lambda c: numel(c["shape"], dims) * SIZES[c["dtype"]]
    out = {"state_in_place": 0, "state_whole": 0, "transient": 0, "output": 0}
    writes = []
    for n in g["root"]["children"]:
        lib = n.get("library")
        if not lib:
            continue
        for o in lib["outputs"]:
            if o is None or o not in cs:
                continue
            c = root(cs[o])
            inplace = c["kind"] == "state" and lib["op"] == "scatter" and lib["inputs"][0] == o
            b = size(cs[lib["inputs"][1]]) if inplace else size(c)
            kind = {"state": "state_in_place" if inplace else "state_whole", "output": "output"}.get(c["kind"], "transient")
            out[kind] += b
            if c["kind"] == "state":
                writes.append((b, n["label"], c["origin"], "rows" if inplace else "whole"))
    out["total"] = sum(out.values())
    out["state_size"] = sum(size(c) for c in g["containers"] if c["kind"] == "state")
    return out, sorted(writes, reverse=True)


def main():
    args = [a for a in sys.argv[1:] if a != "--json"]
    if not args:
        sys.exit(__doc__)
    dims = dict((k, int(v)) for k, v in (a.split("=", 1) for a in args[1:]))
    out, writes = step_bytes(args[0], dims)
    if "--json" in sys.argv:
        print(json.dumps(dict(out, state_writes=[{"bytes": b, "node": n, "state": s, "how": h}
                                                 for b, n, s, h in writes])))
        return
    for k, v in out.items():
        print(f"{k:16s} {v:14,d} bytes")
    for b, n, s, h in writes[:8]:
        print(f"  {b:12,d}  {s} ({h}, node '{n}')")


if __name__ == "__main__":
    main()
