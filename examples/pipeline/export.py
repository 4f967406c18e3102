"""Export a small classifier for the pipeline example, with PyTorch's answer.

    python3 export.py [OUTDIR]          (default: build)

writes into OUTDIR: tinynet.pt2 (torch.export.save), x.npy (a fixed input,
4x32 float32) and y_ref.npy (eager PyTorch's output for it, 4x10 float32),
the reference the CI gate (`doccc run --expect`) checks the library against.
"""

import sys
from pathlib import Path

import numpy as np
import torch


class TinyNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(32, 64)
        self.norm = torch.nn.LayerNorm(64)
        self.fc2 = torch.nn.Linear(64, 10)

    def forward(self, x):
        return torch.softmax(self.fc2(torch.nn.functional.gelu(self.norm(self.fc1(x)))), dim=-1)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "build")
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    model = TinyNet().eval()
    x = torch.randn(4, 32)
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
        y = model(x)
    torch.export.save(ep, str(out / "tinynet.pt2"))
    np.save(out / "x.npy", x.numpy().astype("<f4"))
    np.save(out / "y_ref.npy", y.numpy().astype("<f4"))
    print(f"wrote {out}/tinynet.pt2, x.npy, y_ref.npy")


if __name__ == "__main__":
    main()
