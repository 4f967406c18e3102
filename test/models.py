"""Models the test suite exports and compiles, in plain PyTorch with fixed seeds.

Every factory seeds torch itself, so a model has the same weights in every
process (the exporter, the reference computation and bench.py agree without
passing tensors around). BatchNorm layers get random affine parameters and
running statistics: a fresh BatchNorm (mean 0, var 1, weight 1, bias 0) is the
identity up to eps, and would let a wrong BatchNorm folding pass.

    mlp        (B, 64)          -> Linear 64->128, ReLU, Linear 128->64, ReLU, Linear 64->10
    small_cnn  (B, 3, 32, 32)   -> conv3x3+BN+ReLU, maxpool, residual block (two conv3x3+BN,
                                   add, ReLU), stride-2 conv+ReLU, adaptive avg pool,
                                   flatten, Linear 32->10
    resnet18   (B, 3, 224, 224) -> examples/resnet18/model.py (torchvision's architecture)

Models that doccc must reject (test_cli.py) are at the end of the file.
Only torch is imported; numpy conversions happen in the tests.
"""

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Tuple

import torch
import torch.nn as nn

ROOT = Path(__file__).resolve().parent.parent


def _load_resnet18_module():
    """examples/resnet18/model.py, loaded by path (examples stay self-contained)."""
    path = ROOT / "examples" / "resnet18" / "model.py"
    spec = importlib.util.spec_from_file_location("doccc_example_resnet18_model", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


resnet18_model = _load_resnet18_module()
randomize_batchnorm = resnet18_model.randomize_batchnorm


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 64)
        self.fc3 = nn.Linear(64, 10)
        self.relu = nn.ReLU()

    def forward(self, x):
        x = self.relu(self.fc1(x))
        x = self.relu(self.fc2(x))
        return self.fc3(x)


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        # residual block
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(16)
        self.conv3 = nn.Conv2d(16, 16, 3, padding=1, bias=True)
        self.bn3 = nn.BatchNorm2d(16)
        # stride-2 convolution with bias
        self.conv4 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = torch.relu(self.bn1(self.conv1(x)))
        x = self.pool(x)
        y = torch.relu(self.bn2(self.conv2(x)))
        y = self.bn3(self.conv3(y))
        x = torch.relu(x + y)
        x = torch.relu(self.conv4(x))
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.fc(x)


def make_mlp():
    torch.manual_seed(0)
    return MLP().eval()


def make_small_cnn():
    torch.manual_seed(0)
    m = SmallCNN()
    randomize_batchnorm(m, torch.Generator().manual_seed(1))
    return m.eval()


def make_resnet18():
    return resnet18_model.make_resnet18(seed=0)


@dataclass(frozen=True)
class ModelSpec:
    make: Callable[[], nn.Module]
    input_shape: Tuple[int, ...]      # without the batch dimension


MODELS = {
    "mlp": ModelSpec(make_mlp, (64,)),
    "small_cnn": ModelSpec(make_small_cnn, (3, 32, 32)),
    "resnet18": ModelSpec(make_resnet18, (3, 224, 224)),
}


def make_model(name):
    return MODELS[name].make()


def make_input(name, batch, seed=1234):
    """A fixed-seed N(0, 1) float32 input of the model's shape."""
    g = torch.Generator().manual_seed(seed + batch)
    return torch.randn((batch,) + MODELS[name].input_shape, generator=g, dtype=torch.float32)


def reference(model, x):
    """Eager float32 output(s) of model(x) under no_grad, as a list of tensors."""
    with torch.no_grad():
        y = model(x)
    return list(y) if isinstance(y, (tuple, list)) else [y]


# ---- models doccc must reject ---------------------------------------------------

class UnsupportedOps(nn.Module):
    """Two operators no DNN compiler implements: linalg_det and linalg_eigvalsh
    (training IR: aten.linalg_det, aten.linalg_eigvalsh; core IR:
    aten._linalg_det, aten._linalg_eigh). Input (2, 4)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x).reshape(2, 2, 2)
        return torch.linalg.det(y), torch.linalg.eigvalsh(y)


class ComplexFFT(nn.Module):
    """A real input whose FFT is complex64 inside the graph. Input (2, 8)."""

    def forward(self, x):
        return torch.fft.fft(x).abs()


class TrainBN(nn.Module):
    """Exported in train mode: batch_norm(training=True) and running-stat updates.
    Input (2, 3, 8, 8)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


class LossModel(nn.Module):
    """Returns a scalar loss; with export's joint forward-backward the signature
    gets a LOSS_OUTPUT and GRADIENT_TO_PARAMETER outputs. Input (2, 4)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return ((self.fc(x) ** 2).sum(),)
