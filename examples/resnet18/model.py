"""ResNet-18 in plain PyTorch (no torchvision), with reproducible random weights.

The architecture is torchvision's resnet18 layer for layer, with the same module
names, so the state-dict keys (the FQNs doccc sees in the exported program, such
as "layer1.0.conv1.weight") are the familiar ones:

    stem     conv1 7x7 s2 p3 (3->64, no bias) -> bn1 -> relu -> maxpool 3x3 s2 p1
    layer1   2 BasicBlocks,  64 channels
    layer2   2 BasicBlocks, 128 channels, first block stride 2 + 1x1 downsample
    layer3   2 BasicBlocks, 256 channels, likewise
    layer4   2 BasicBlocks, 512 channels, likewise
    head     adaptive_avg_pool2d(1) -> flatten -> fc 512 -> num_classes

BasicBlock: conv3x3 -> BN -> ReLU(inplace) -> conv3x3 -> BN, plus the identity
(or the 1x1-conv + BN downsample of it), then ReLU(inplace).

make_resnet18() seeds torch with 0, initializes the weights as torchvision does
(Kaiming normal for convolutions), and then gives every BatchNorm random
scale, shift, running mean and running variance. Trained networks never have the
trivial statistics (mean 0, var 1, weight 1, bias 0) that a fresh BatchNorm has,
and a compiler that folds BatchNorm into the preceding convolution is only
tested by statistics that change the numbers. The statistics are drawn in a
range that keeps the activations, and so the logits, of moderate size.

This file is used by the example (export.py) and by the test suite
(test/models.py loads it by path), so it must import nothing but torch.
"""

import torch
import torch.nn as nn


def conv3x3(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, kernel_size=3, stride=stride, padding=1, bias=False)


def conv1x1(cin, cout, stride=1):
    return nn.Conv2d(cin, cout, kernel_size=1, stride=stride, bias=False)


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, cout, stride=1, downsample=None):
        super().__init__()
        self.conv1 = conv3x3(cin, cout, stride)
        self.bn1 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(cout, cout)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)
        out = self.conv2(out)
        out = self.bn2(out)
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        out = self.relu(out)
        return out


class ResNet(nn.Module):
    def __init__(self, layers=(2, 2, 2, 2), num_classes=1000):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(64, layers[0])
        self.layer2 = self._make_layer(128, layers[1], stride=2)
        self.layer3 = self._make_layer(256, layers[2], stride=2)
        self.layer4 = self._make_layer(512, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512 * BasicBlock.expansion, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * BasicBlock.expansion:
            downsample = nn.Sequential(
                conv1x1(self.inplanes, planes * BasicBlock.expansion, stride),
                nn.BatchNorm2d(planes * BasicBlock.expansion),
            )
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * BasicBlock.expansion
        for _ in range(1, blocks):
            layers.append(BasicBlock(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.conv1(x)
        x = self.bn1(x)
        x = self.relu(x)
        x = self.maxpool(x)
        x = self.layer1(x)
        x = self.layer2(x)
        x = self.layer3(x)
        x = self.layer4(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        x = self.fc(x)
        return x


def randomize_batchnorm(model, generator):
    """Give every BatchNorm non-trivial affine parameters and running statistics."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                n = m.num_features
                m.weight.copy_(torch.empty(n).uniform_(0.5, 1.5, generator=generator))
                m.bias.copy_(torch.empty(n).normal_(0.0, 0.1, generator=generator))
                m.running_mean.copy_(torch.empty(n).normal_(0.0, 0.1, generator=generator))
                m.running_var.copy_(torch.empty(n).uniform_(0.5, 2.0, generator=generator))


def make_resnet18(num_classes=1000, seed=0):
    """ResNet-18 with reproducible random weights, in eval mode."""
    torch.manual_seed(seed)
    model = ResNet((2, 2, 2, 2), num_classes)
    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
    g = torch.Generator().manual_seed(seed + 1)
    randomize_batchnorm(model, g)
    return model.eval()


def make_input(batch=1, seed=1):
    """A fixed ImageNet-sized input, N(0, 1) like a normalized image."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(batch, 3, 224, 224, generator=g)


__all__ = ["BasicBlock", "ResNet", "make_resnet18", "make_input", "randomize_batchnorm"]
