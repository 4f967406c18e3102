"""Export ResNet-18 for doccc, with a fixed input and PyTorch's answer for it.

    python3 export.py [OUTDIR]          (default: build)

writes into OUTDIR:
    resnet18.pt2    the program: torch.export.export(model, (x,)), saved with
                    torch.export.save (eval mode, under torch.no_grad())
    x.npy, x.bin    the input, (1, 3, 224, 224) float32 (the .bin is raw
                    little-endian float32, for C programs)
    y_ref.npy, y_ref.bin
                    eager PyTorch's logits for x, (1, 1000) float32
    top5_ref.txt    eager PyTorch's five best ImageNet class indices with their
                    logits, one "index score" per line

The weights are random (seeded, see model.py): the class indices are
ImageNet's 0..999, but they do not name what the picture shows.
"""

import sys
from pathlib import Path

import numpy as np
import torch

from model import make_input, make_resnet18


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    out.mkdir(parents=True, exist_ok=True)

    model = make_resnet18().eval()
    x = make_input(batch=1)
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
        y = model(x)
    torch.export.save(ep, str(out / "resnet18.pt2"))

    xs = x.numpy().astype("<f4")
    ys = y.numpy().astype("<f4")
    np.save(out / "x.npy", xs)
    np.save(out / "y_ref.npy", ys)
    xs.tofile(out / "x.bin")
    ys.tofile(out / "y_ref.bin")

    scores, idx = torch.topk(y[0], 5)
    with open(out / "top5_ref.txt", "w") as f:
        for i, s in zip(idx.tolist(), scores.tolist()):
            f.write(f"{i} {s:.6f}\n")
    print(f"wrote {out}/resnet18.pt2, x, y_ref; PyTorch top-5: {idx.tolist()}")


if __name__ == "__main__":
    main()
