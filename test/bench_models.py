"""The models of test/bench_peers.py (doccc next to ONNX Runtime and OpenVINO), in plain PyTorch.

    make(name, batch, small=False) -> (model in eval mode, inputs tuple)

Fixed-seed random weights, so every process builds the same model. BatchNorm
layers get random affine parameters and running statistics and LayerNorms
random affine parameters (models.randomize_batchnorm,
models_zoo._randomize_layernorm): no normalization is the identity. Full size
unless small (the reduced sizes test/test_bench_peers.py runs in seconds;
given in brackets):

  resnet18           torchvision's ResNet-18 (examples/resnet18), 224x224, 1000 classes
                     [64x64]
  resnet50           ResNet-50, base width 64 (models_zoo.ResNet50), 224x224, 1000 classes
                     [width 16, 64x64, 100 classes]
  mobilenet_v2       MobileNetV2 width 1.0 (models_zoo.MobileNetV2), 224x224 [width 0.5, 64x64]
  mobilenet_v3_large torchvision's MobileNetV3-Large: hardswish and ReLU, inverted
                     residuals with squeeze-excitation (hardsigmoid gate), the
                     standard 15-row settings table, 960 -> 1280 head [64x64]
  efficientnet_b0    EfficientNet-B0: MBConv blocks with SiLU and squeeze-excitation
                     (sigmoid gate), 7 stages, 1280-channel head [64x64]
  convnext_tiny      ConvNeXt-T: depths 3,3,9,3, dims 96,192,384,768, 7x7 depthwise
                     convs, channel LayerNorm, GELU MLP, layer scale [depths 1,1,1,1, 64x64]
  vit_tiny           ViT-Tiny/16 (models_zoo.make_vit_tiny), 12 blocks, 224x224
                     [4 blocks, 64x64, 100 classes]
  bert_base          a BERT encoder of BERT-base's shape (models_zoo.BertEncoder: 12
                     layers, hidden 768, 12 heads, intermediate 3072, vocabulary 30522)
                     on 128 tokens, the last 28 padding, as bench.py's bert_mini (the
                     same as test/bench_gpu.py's bert_base) [2 layers, hidden 64, 16 tokens]
  gpt2               a GPT-2-style decoder (test/bench_gpu.py's GPT2: pre-norm blocks,
                     causal SDPA, tanh GELU MLP, LayerNorm, LM head tied to the token
                     embedding), 4 layers, width 768, 12 heads, vocabulary 50257, 128
                     tokens: logits (B, 128, 50257) [2 layers, width 64, 16 tokens]
  lstm               a 2-layer LSTM, input and hidden 256, 100 steps (bench.py's);
                     batch is the LSTM batch [hidden 32, 10 steps]

The convolution networks' weights are Kaiming-normal (fan out), so activations
stay O(1) through the depth, as in a trained network.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import bench
import bench_gpu
import models
import models_zoo
from models_zoo import _make_divisible

MODELS = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0",
          "convnext_tiny", "vit_tiny", "bert_base", "gpt2", "lstm")
# The convolution networks: bench_peers.py reports their share of the FMA peak.
CONV_MODELS = MODELS[:6]


def _conv_bn(cin, cout, kernel, stride=1, groups=1, act=None):
    """conv (no bias) + BatchNorm (torchvision's eps 1e-3 for these nets) + optional activation."""
    layers = [nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout, eps=1e-3)]
    return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    """x * gate(fc2(act(fc1(mean over H, W of x)))), the fcs as 1x1 convs with bias."""

    def __init__(self, channels, squeeze, act, gate):
        super().__init__()
        self.fc1 = nn.Conv2d(channels, squeeze, 1)
        self.fc2 = nn.Conv2d(squeeze, channels, 1)
        self.act, self.gate = act(), gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(self.act(self.fc1(s))))


class InvertedResidualSE(nn.Module):
    """MobileNetV3's and EfficientNet's block: 1x1 expansion (unless expand == cin),
    k x k depthwise, optional squeeze-excitation, 1x1 projection; a residual add
    where the shape is kept."""

    def __init__(self, cin, expand, cout, kernel, stride, act, se):
        super().__init__()
        layers = [] if expand == cin else [_conv_bn(cin, expand, 1, act=act)]
        layers.append(_conv_bn(expand, expand, kernel, stride, groups=expand, act=act))
        if se:
            layers.append(se(expand))
        layers.append(_conv_bn(expand, cout, 1))
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class MobileNetV3Large(nn.Module):
    # kernel, expanded channels, out channels, squeeze-excitation, activation, stride
    SETTINGS = [(3, 16, 16, False, "RE", 1), (3, 64, 24, False, "RE", 2), (3, 72, 24, False, "RE", 1),
                (5, 72, 40, True, "RE", 2), (5, 120, 40, True, "RE", 1), (5, 120, 40, True, "RE", 1),
                (3, 240, 80, False, "HS", 2), (3, 200, 80, False, "HS", 1), (3, 184, 80, False, "HS", 1),
                (3, 184, 80, False, "HS", 1), (3, 480, 112, True, "HS", 1), (3, 672, 112, True, "HS", 1),
                (5, 672, 160, True, "HS", 2), (5, 960, 160, True, "HS", 1), (5, 960, 160, True, "HS", 1)]

    def __init__(self, num_classes=1000):
        super().__init__()
        acts = {"RE": nn.ReLU, "HS": nn.Hardswish}
        feats = [_conv_bn(3, 16, 3, 2, act=nn.Hardswish)]
        cin = 16
        for k, exp, cout, se, act, s in self.SETTINGS:
            gate = ((lambda c: SqueezeExcite(c, _make_divisible(c // 4), nn.ReLU, nn.Hardsigmoid))
                    if se else None)
            feats.append(InvertedResidualSE(cin, exp, cout, k, s, acts[act], gate))
            cin = cout
        feats.append(_conv_bn(cin, 6 * cin, 1, act=nn.Hardswish))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Sequential(nn.Linear(6 * cin, 1280), nn.Hardswish(), nn.Dropout(0.2),
                                        nn.Linear(1280, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


class EfficientNetB0(nn.Module):
    # expansion ratio, kernel, stride of the first block, out channels, blocks
    STAGES = [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3),
              (6, 5, 1, 112, 3), (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]

    def __init__(self, num_classes=1000):
        super().__init__()
        feats = [_conv_bn(3, 32, 3, 2, act=nn.SiLU)]
        cin = 32
        for ratio, k, stride, cout, n in self.STAGES:
            for i in range(n):
                # The squeeze width is a quarter of the block's input channels.
                sq = max(1, cin // 4)
                feats.append(InvertedResidualSE(cin, cin * ratio, cout, k, stride if i == 0 else 1, nn.SiLU,
                                                lambda c, sq=sq: SqueezeExcite(c, sq, nn.SiLU, nn.Sigmoid)))
                cin = cout
        feats.append(_conv_bn(cin, 1280, 1, act=nn.SiLU))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class ConvNeXtBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.layer_scale = nn.Parameter(torch.full((dim,), 1e-6))

    def forward(self, x):
        y = self.norm(self.dwconv(x).permute(0, 2, 3, 1))
        y = self.fc2(F.gelu(self.fc1(y))) * self.layer_scale
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtTiny(nn.Module):
    def __init__(self, depths=(3, 3, 9, 3), dims=(96, 192, 384, 768), num_classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, dims[0], 4, stride=4), LayerNorm2d(dims[0], eps=1e-6)]
        for i, (depth, dim) in enumerate(zip(depths, dims)):
            if i:
                layers += [LayerNorm2d(dims[i - 1], eps=1e-6), nn.Conv2d(dims[i - 1], dim, 2, stride=2)]
            layers += [ConvNeXtBlock(dim) for _ in range(depth)]
        self.features = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(dims[-1], eps=1e-6)
        self.head = nn.Linear(dims[-1], num_classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.head(self.norm(x))


def _init_conv_net(m, seed):
    """Kaiming-normal convs, random BatchNorm and LayerNorm parameters and statistics;
    ConvNeXt's layer scales drawn from [0.1, 0.5], not its 1e-6 start, so that no
    block is the identity."""
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.Conv2d):
                nn.init.kaiming_normal_(mod.weight, mode="fan_out")
            if isinstance(mod, ConvNeXtBlock):
                mod.layer_scale.copy_(torch.empty(mod.layer_scale.shape).uniform_(0.1, 0.5, generator=g))
    models.randomize_batchnorm(m, g)
    models_zoo._randomize_layernorm(m, g)
    return m.eval()


def _image(batch, image):
    g = torch.Generator().manual_seed(1234 + batch)
    return (torch.randn(batch, 3, image, image, generator=g),)


def _image_model(name, small):
    """(model, image size) of a convolution network or ViT."""
    torch.manual_seed(0)
    if name == "resnet18":
        return models.make_model("resnet18"), 64 if small else 224
    if name == "resnet50":
        return _init_conv_net(models_zoo.ResNet50(16 if small else 64, num_classes=100 if small else 1000),
                              0), 64 if small else 224
    if name == "vit_tiny":
        model = (models_zoo.make_vit_tiny() if small else
                 models_zoo.make_vit_tiny(depth=12, image=224, num_classes=1000))[0]
        return model, 64 if small else 224
    make = {"mobilenet_v2": lambda: models_zoo.MobileNetV2(0.5 if small else 1.0),
            "mobilenet_v3_large": MobileNetV3Large,
            "efficientnet_b0": EfficientNetB0,
            "convnext_tiny": lambda: ConvNeXtTiny((1, 1, 1, 1) if small else (3, 3, 9, 3))}[name]
    return _init_conv_net(make(), 0), 64 if small else 224


def make(name, batch, small=False):
    """(model in eval mode, inputs) of a bench model at a batch size."""
    if name not in MODELS:
        raise SystemExit(f"bench-peers: unknown model '{name}' ({', '.join(MODELS)})")
    if name == "bert_base":
        return bench_gpu.make_case("bert_base", batch, small)
    if name == "gpt2":
        cfg = (dict(vocab=1000, ctx=64, dim=64, layers=2, heads=2) if small else
               dict(vocab=50257, ctx=1024, dim=768, layers=4, heads=12))
        model = bench_gpu.make_gpt2(cfg)
        return model, bench_gpu._token_inputs(batch, 16 if small else 128, cfg["vocab"], 0)[:1]
    if name == "lstm":
        return bench.make_recurrent(torch.nn.LSTM, batch, 32 if small else 256, 10 if small else 100)
    model, image = _image_model(name, small)
    return model, _image(batch, image)
