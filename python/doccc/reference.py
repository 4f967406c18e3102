"""PyTorch's value of every node of an exported program, for `doccc compare`.

    python -m doccc.reference MODEL.pt2 -i X.npy [-i Y.npy ...] -o REF_DIR

or, from Python, ``doccc.reference.dump(ep_or_path, inputs, "REF_DIR")``.

It runs the program's graph node by node in eager PyTorch (a torch.fx
Interpreter over ``ep.graph_module``, with the parameters, buffers and
constants the export lifted) and writes the tensor each node computes as
REF_DIR/NAME.npy, NAME the node's name in the export: the names doccc gives
the values of a library built with ``--values``, which ``doccc run LIB
--dump-values GOT_DIR`` writes. Then ``doccc compare GOT_DIR REF_DIR`` names
the first node whose values differ.

File names follow doccc's rule: letters, digits, '_', '-' and '.' kept,
anything else '_', no leading '.', at most 200 bytes, then ".npy".
bfloat16 tensors are written as their raw bits in uint16 arrays, as
``doccc run`` reads and writes them. Needs torch and numpy.
"""

import argparse
import os
import re
import sys

__all__ = ["dump", "value_file", "main"]


def value_file(name):
    """The file a value called name is kept in (doccc's rule)."""
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name[:200])
    if s.startswith("."):
        s = "_" + s[1:]
    return (s or "value") + ".npy"


def _to_numpy(t):
    import torch
    t = t.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view("uint16")
    return t.numpy()


def _from_numpy(a, like):
    """A .npy array as the tensor the placeholder expects (bfloat16 from uint16 bits)."""
    import numpy as np
    import torch
    if like is not None and like.dtype == torch.bfloat16 and a.dtype == np.uint16:
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(like.dtype) if like is not None and t.dtype != like.dtype else t


def _lifted_args(ep, user_inputs):
    """The graph's placeholders' values: what the export lifted, and the user's inputs in order."""
    from torch.export.graph_signature import InputKind
    users = iter(user_inputs)
    args = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            args.append(next(users))
        elif spec.kind == InputKind.PARAMETER:
            args.append(ep.state_dict[spec.target])
        elif spec.kind == InputKind.BUFFER:
            args.append(ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants[spec.target])
        else:  # constant tensors, custom objects, tokens
            args.append(ep.constants.get(spec.target) if spec.target is not None else None)
    return args


def dump(ep, inputs, outdir):
    """Runs ep (an ExportedProgram or a .pt2 path) on inputs (tensors or arrays)
    and writes every call_function node's tensor value to outdir/NAME.npy.
    Returns the names written, in the order the nodes ran."""
    import numpy as np
    import torch
    if isinstance(ep, (str, os.PathLike)):
        ep = torch.export.load(str(ep))
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    from torch.export.graph_signature import InputKind
    user_ph = [n for n, s in zip(placeholders, ep.graph_signature.input_specs) if s.kind == InputKind.USER_INPUT]
    if len(inputs) != len(user_ph):
        raise ValueError(f"the program takes {len(user_ph)} input(s), got {len(inputs)}")
    xs = []
    for x, ph in zip(inputs, user_ph):
        like = ph.meta.get("val")
        xs.append(_from_numpy(x, like) if isinstance(x, np.ndarray) else x)
    os.makedirs(outdir, exist_ok=True)
    written = []

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            if n.op == "call_function" and isinstance(r, torch.Tensor):
                np.save(os.path.join(outdir, value_file(n.name)), _to_numpy(r))
                written.append(n.name)
            return r

    with torch.no_grad():
        Recorder(ep.graph_module).run(*_lifted_args(ep, xs))
    return written


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m doccc.reference", description=__doc__.split("\n\n")[0])
    ap.add_argument("model", help="the program: a .pt2 from torch.export.save")
    ap.add_argument("-i", dest="inputs", action="append", default=[], metavar="IN.npy",
                    help="an input, once per input of the program, in order")
    ap.add_argument("-o", dest="outdir", required=True, metavar="REF_DIR", help="where the values go")
    a = ap.parse_args(argv)
    import numpy as np
    try:
        names = dump(a.model, [np.load(p) for p in a.inputs], a.outdir)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"{a.model}: error: {e}", file=sys.stderr)
        return 1
    print(f"{len(names)} values -> {a.outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
