"""make bench-arm: instructions per multiply-add of aarch64 libraries under
emulation (issue 30). No ARM hardware is here, so no times: qemu-aarch64
with test/arm/qemu_insn.c (a TCG plugin counting executed instructions)
runs `doccc run` of a library cross-compiled with --triple
aarch64-linux-gnu, once with one run of the model and once with two; the
difference is one run's instructions, divided by the model's multiply-adds
(torch's FLOP counter over 2). The scalar build (-t none) is the yardstick:
a vectorized build far above 1/4 of it (NEON's 4 lanes) has lost its
vectors somewhere.

    python3 test/bench_arm.py [--models resnet18,bert_layer] [--json FILE]

ResNet-18 on a 224x224 image (1.8 G multiply-adds) and one BERT layer
(hidden 256, 4 heads, intermediate 1024, 128 tokens), at batch 1 on one
thread (-t sequential) for edge and server, and -t none.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "test"))
DOCCC = ROOT / "build" / "doccc"
BUILDS = (("sequential", "edge"), ("sequential", "server"), ("none", "edge"))


def resnet18():
    import torch
    import models
    return models.make_model("resnet18"), (torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(1)),)


def bert_layer():
    import torch
    from transformers import BertConfig
    from transformers.models.bert.modeling_bert import BertLayer
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=256, num_attention_heads=4, intermediate_size=1024, attn_implementation="eager")
    layer = BertLayer(cfg).eval()

    class L(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = layer

        def forward(self, x):
            return self.layer(x)[0]

    return L().eval(), (torch.randn(1, 128, 256),)


MODELS = {"resnet18": resnet18, "bert_layer": bert_layer}


def macs(m, xs):
    import torch
    from torch.utils.flop_counter import FlopCounterMode
    with torch.no_grad(), FlopCounterMode(display=False) as fc:
        m(*xs)
    return fc.get_total_flops() / 2


def count(plugin, lib, x, runs, d):
    """Instructions of `doccc run LIB` with `runs` runs of the model."""
    out = Path(d) / f"count{runs}.txt"
    extra = ["--repeat", str(runs), "--warmup", "0"]
    env = dict(os.environ, OMP_NUM_THREADS="1", DOCC_QEMU=f"qemu-aarch64 -plugin {plugin},out={out}")
    r = subprocess.run([str(DOCCC), "run", str(lib), "-i", str(x), "-o", str(Path(d) / "y.npy"), "-q", *extra],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"doccc run failed:\n{r.stdout}{r.stderr}")
    return int(out.read_text().split()[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--json", default=str(ROOT / "build" / "bench-arm.json"))
    args = ap.parse_args()
    import numpy as np
    import torch
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-arm-") as d:
        plugin = Path(d) / "qemu_insn.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(plugin), str(ROOT / "test/arm/qemu_insn.c")],
                       check=True)
        for name in args.models.split(","):
            m, xs = MODELS[name]()
            pt2 = Path(d) / f"{name}.pt2"
            torch.export.save(torch.export.export(m, xs), str(pt2))
            x = Path(d) / f"{name}_x.npy"
            np.save(x, xs[0].numpy())
            n = macs(m, xs)
            for target, category in BUILDS:
                out = Path(d) / f"{name}-{target}-{category}"
                subprocess.run([str(DOCCC), str(pt2), "-t", target, "-c", category, "--triple", "aarch64-linux-gnu",
                                "-o", f"{out}/"], check=True)
                lib = next(out.glob("lib*.so"))
                one = count(plugin, lib, x, 1, d)
                two = count(plugin, lib, x, 2, d)
                per = two - one
                rows.append({"model": name, "target": target, "category": category, "macs": n, "insns": per,
                             "insns_per_mac": per / n})
                print(f"{name:12s} {target:10s} {category:7s} {n / 1e6:9.1f} M MACs {per / 1e6:10.1f} M insns "
                      f"{per / n:6.3f} insns/MAC", flush=True)
    Path(args.json).write_text(json.dumps(rows, indent=1))
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
