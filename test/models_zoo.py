"""Real model architectures for end-to-end tests, in plain PyTorch.

Nothing is downloaded: every factory builds the architecture from its own
config, seeds torch itself and draws random weights, so every process gets the
same model (the exporter, the eager reference and the tests agree without
passing tensors around). BatchNorm layers get random affine parameters and
running statistics (models.randomize_batchnorm), so a wrong BatchNorm folding
changes the numbers.

Each factory is make_X() -> (model in eval mode, example_inputs(batch) -> tuple
of tensors); the inputs are fixed-seed too. The sizes are chosen so that one
doccc compile takes seconds and the scalar `none` target runs a model in well
under a second or two; where they differ from the published model it says so.

    resnet50     ResNet-50: torchvision's architecture (Bottleneck blocks 3-4-6-3,
                 stride on the 3x3 conv, expansion 4), base width 16 instead of 64
                 (every channel count / 4, ~1.5 M params instead of 25.6 M), 64x64
                 input, 100 classes; the head unscaled (logits reach ~40).
                                                          in (B,3,64,64) -> (B,100)
    mobilenet_v2 MobileNetV2 (torchvision's layout: inverted residuals 1-6-6-6-6-6-6
                 expansion, depthwise 3x3 convs, ReLU6, BatchNorm, 1280-channel
                 head), width 0.5, 64x64 input, 100 classes (~0.82 M params); the
                 classifier is scaled by 10 so that the logits are O(1), not O(0.1).
                                                          in (B,3,64,64) -> (B,100)
    vit_tiny     ViT-Tiny (dim 192, 3 heads, MLP 768, patch 16, class token,
                 learned position embedding, pre-norm blocks of layer_norm +
                 F.scaled_dot_product_attention + GELU MLP, final norm, head on the
                 class token) with 4 blocks instead of 12 and a 64x64 image (16
                 patches + class token) instead of 224x224; ~1.95 M params.
                                                          in (B,3,64,64) -> (B,100)
    bert         BERT-style encoder (HF BertModel layout): word (int64 ids), token
                 type and position embeddings + layer_norm, an additive float
                 attention mask built from an int64 0/1 mask input
                 ((1 - m) * finfo.min), 2 post-norm layers (hidden 128, 2 heads,
                 intermediate 512, SDPA with the mask, exact GELU), tanh pooler on
                 the first token; vocab 1000, sequence 16; ~0.55 M params.
                 in input_ids (B,16) i64, token_type_ids (B,16) i64,
                 attention_mask (B,16) i64 -> sequence (B,16,128), pooled (B,128)
    segformer_b0 SegFormer-B0 (HF SegformerForSemanticSegmentation layout, written
                 out in plain torch; test_hf.py runs transformers' own
                 SegformerModel): 4 stages, hidden 32-64-160-256, depths 2-2-2-2, heads
                 1-2-5-8, sr ratios 8-4-2-1, overlapping patch embeddings (conv
                 7x7 s4, 3x3 s2), efficient self-attention with spatial reduction
                 (conv kernel = stride = sr + layer_norm) in eager matmul/softmax
                 form, Mix-FFN with a depthwise 3x3 conv and GELU, all-MLP decode
                 head (per-stage linear, bilinear upsampling with
                 align_corners=False, cat, 1x1 conv + BatchNorm + ReLU, 1x1
                 classifier); 64x64 input, 19 classes; ~3.7 M params.
                                                          in (B,3,64,64) -> (B,19,16,16)
    qwen2_layer  A Qwen2 decoder layer and the final norm (HF Qwen2 layout):
                 RMSNorm, q/k/v projections with bias, rotary embeddings computed
                 in forward (inv_freq buffer, arange positions, cos/sin, rotate_half
                 by slicing and cat), grouped-query attention (4 query heads, 2 kv
                 heads, repeat_kv by expand + reshape) through
                 F.scaled_dot_product_attention(is_causal=True), SiLU-gated MLP;
                 hidden 128, intermediate 256, sequence 16; ~0.15 M params.
                                                          in (B,16,128) -> (B,16,128)

Only torch is imported (and models.py for randomize_batchnorm).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from models import randomize_batchnorm


def _image_inputs(shape, seed=1234):
    def example_inputs(batch):
        g = torch.Generator().manual_seed(seed + batch)
        return (torch.randn((batch,) + shape, generator=g),)
    return example_inputs


# ---- ResNet-50 --------------------------------------------------------------------

class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet50(nn.Module):
    def __init__(self, width=64, layers=(3, 4, 6, 3), num_classes=1000):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], 2)
        self.layer3 = self._make_layer(width * 4, layers[2], 2)
        self.layer4 = self._make_layer(width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * 4, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * 4:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * 4, 1, stride=stride, bias=False),
                                       nn.BatchNorm2d(planes * 4))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * 4
        layers += [Bottleneck(self.inplanes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def make_resnet50(width=16, image=64, num_classes=100, seed=0):
    torch.manual_seed(seed)
    m = ResNet50(width, num_classes=num_classes)
    for mod in m.modules():
        if isinstance(mod, nn.Conv2d):
            nn.init.kaiming_normal_(mod.weight, mode="fan_out", nonlinearity="relu")
    randomize_batchnorm(m, torch.Generator().manual_seed(seed + 1))
    return m.eval(), _image_inputs((3, image, image))


def _scale_head(linear, factor):
    """Scale a classifier so the logits are O(1-10), as a trained network's are."""
    with torch.no_grad():
        linear.weight.mul_(factor)
        linear.bias.mul_(factor)


# ---- MobileNetV2 --------------------------------------------------------------------

def _make_divisible(v, divisor=8):
    new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new_v + divisor if new_v < 0.9 * v else new_v


class ConvBNReLU6(nn.Sequential):
    def __init__(self, cin, cout, kernel=3, stride=1, groups=1):
        super().__init__(nn.Conv2d(cin, cout, kernel, stride, (kernel - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = int(round(cin * expand))
        self.use_res = stride == 1 and cin == cout
        layers = []
        if expand != 1:
            layers.append(ConvBNReLU6(cin, hidden, 1))
        layers += [ConvBNReLU6(hidden, hidden, 3, stride, groups=hidden),   # depthwise
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    SETTINGS = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]

    def __init__(self, width_mult=1.0, num_classes=1000):
        super().__init__()
        cin = _make_divisible(32 * width_mult)
        last = _make_divisible(1280 * max(1.0, width_mult))
        feats = [ConvBNReLU6(3, cin, 3, 2)]
        for t, c, n, s in self.SETTINGS:
            cout = _make_divisible(c * width_mult)
            for i in range(n):
                feats.append(InvertedResidual(cin, cout, s if i == 0 else 1, t))
                cin = cout
        feats.append(ConvBNReLU6(cin, last, 1))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


def make_mobilenet_v2(width_mult=0.5, image=64, num_classes=100, seed=0):
    torch.manual_seed(seed)
    m = MobileNetV2(width_mult, num_classes)
    for mod in m.modules():
        if isinstance(mod, nn.Conv2d):
            nn.init.kaiming_normal_(mod.weight, mode="fan_out")
    randomize_batchnorm(m, torch.Generator().manual_seed(seed + 1))
    _scale_head(m.classifier[1], 10.0)
    return m.eval(), _image_inputs((3, image, image))


# ---- ViT-Tiny -----------------------------------------------------------------------

class ViTAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        x = F.scaled_dot_product_attention(q, k, v)
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class ViTBlock(nn.Module):
    def __init__(self, dim, heads, mlp_ratio=4):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.attn = ViTAttention(dim, heads)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, dim * mlp_ratio)
        self.fc2 = nn.Linear(dim * mlp_ratio, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class ViT(nn.Module):
    def __init__(self, image=224, patch=16, dim=192, depth=12, heads=3, num_classes=1000):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        n = (image // patch) ** 2
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.blocks = nn.ModuleList(ViTBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], dim=1) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x)[:, 0])


def _randomize_layernorm(model, g):
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, nn.LayerNorm):
                mod.weight.copy_(torch.empty(mod.weight.shape).uniform_(0.5, 1.5, generator=g))
                mod.bias.copy_(torch.empty(mod.bias.shape).normal_(0.0, 0.1, generator=g))


def make_vit_tiny(depth=4, image=64, num_classes=100, seed=0):
    torch.manual_seed(seed)
    m = ViT(image, 16, 192, depth, 3, num_classes)
    _randomize_layernorm(m, torch.Generator().manual_seed(seed + 1))
    return m.eval(), _image_inputs((3, image, image))


# ---- BERT-style encoder -------------------------------------------------------------

class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter, eps):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.intermediate = nn.Linear(hidden, inter)
        self.output = nn.Linear(inter, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)
        self.dropout = nn.Dropout(0.1)

    def _split(self, t):
        b, s, h = t.shape
        return t.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x, mask):
        b, s, h = x.shape
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        a = a.transpose(1, 2).reshape(b, s, h)
        x = self.attn_norm(self.dropout(self.attn_out(a)) + x)
        y = self.output(F.gelu(self.intermediate(x)))
        return self.out_norm(self.dropout(y) + x)


class BertEncoder(nn.Module):
    def __init__(self, vocab=1000, hidden=128, layers=2, heads=2, inter=512, max_pos=64,
                 type_vocab=2, eps=1e-12):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=eps)
        self.register_buffer("position_ids", torch.arange(max_pos).unsqueeze(0), persistent=False)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, inter, eps) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, token_type_ids, attention_mask):
        s = input_ids.shape[1]
        pos = self.position_ids[:, :s]
        x = (self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
             + self.position_embeddings(pos))
        x = self.emb_norm(x)
        # HF's get_extended_attention_mask: (1 - mask) * finfo.min, shape (B, 1, 1, S)
        ext = attention_mask[:, None, None, :].to(torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, ext)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def make_bert(seq=16, vocab=1000, seed=0):
    torch.manual_seed(seed)
    m = BertEncoder(vocab=vocab)
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, (nn.Linear, nn.Embedding)):
                nn.init.normal_(mod.weight, 0.0, 0.02)
    _randomize_layernorm(m, torch.Generator().manual_seed(seed + 1))

    def example_inputs(batch):
        g = torch.Generator().manual_seed(1234 + batch)
        ids = torch.randint(1, vocab, (batch, seq), generator=g)
        types = torch.zeros(batch, seq, dtype=torch.int64)
        types[:, seq // 2:] = 1
        mask = torch.ones(batch, seq, dtype=torch.int64)
        for i in range(batch):          # sample i has 2 + 3*i padding tokens at the end
            mask[i, seq - 2 - 3 * i:] = 0
            ids[i, seq - 2 - 3 * i:] = 0
        return ids, types, mask
    return m.eval(), example_inputs


# ---- SegFormer-B0 -------------------------------------------------------------------

class OverlapPatchEmbed(nn.Module):
    def __init__(self, patch, stride, cin, hidden):
        super().__init__()
        self.proj = nn.Conv2d(cin, hidden, patch, stride, patch // 2)
        self.layer_norm = nn.LayerNorm(hidden)

    def forward(self, x):
        x = self.proj(x)
        _, _, h, w = x.shape
        return self.layer_norm(x.flatten(2).transpose(1, 2)), h, w


class EfficientSelfAttention(nn.Module):
    def __init__(self, hidden, heads, sr):
        super().__init__()
        self.heads, self.head_size = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.sr_ratio = sr
        if sr > 1:
            self.sr = nn.Conv2d(hidden, hidden, sr, sr)
            self.layer_norm = nn.LayerNorm(hidden)
        self.dense = nn.Linear(hidden, hidden)

    def _heads(self, t):
        b, n, _ = t.shape
        return t.view(b, n, self.heads, self.head_size).transpose(1, 2)

    def forward(self, x, h, w):
        q = self._heads(self.query(x))
        kv = x
        if self.sr_ratio > 1:
            b, n, c = x.shape
            kv = x.permute(0, 2, 1).reshape(b, c, h, w)
            kv = self.sr(kv).reshape(b, c, -1).permute(0, 2, 1)
            kv = self.layer_norm(kv)
        k, v = self._heads(self.key(kv)), self._heads(self.value(kv))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size)
        probs = F.dropout(F.softmax(scores, dim=-1), 0.0, self.training)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.shape[:-2] + (self.heads * self.head_size,))
        return self.dense(ctx)


class MixFFN(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.dense1 = nn.Linear(hidden, inter)
        self.dwconv = nn.Conv2d(inter, inter, 3, 1, 1, groups=inter)
        self.dense2 = nn.Linear(inter, hidden)

    def forward(self, x, h, w):
        x = self.dense1(x)
        b, n, c = x.shape
        x = self.dwconv(x.transpose(1, 2).view(b, c, h, w)).flatten(2).transpose(1, 2)
        return self.dense2(F.gelu(x))


class SegformerLayer(nn.Module):
    def __init__(self, hidden, heads, sr, mlp_ratio=4):
        super().__init__()
        self.layer_norm_1 = nn.LayerNorm(hidden)
        self.attention = EfficientSelfAttention(hidden, heads, sr)
        self.layer_norm_2 = nn.LayerNorm(hidden)
        self.mlp = MixFFN(hidden, hidden * mlp_ratio)

    def forward(self, x, h, w):
        x = x + self.attention(self.layer_norm_1(x), h, w)
        return x + self.mlp(self.layer_norm_2(x), h, w)


class SegformerB0(nn.Module):
    def __init__(self, num_labels=19, hidden=(32, 64, 160, 256), depths=(2, 2, 2, 2),
                 heads=(1, 2, 5, 8), sr=(8, 4, 2, 1), patch=(7, 3, 3, 3), stride=(4, 2, 2, 2),
                 decoder_hidden=256):
        super().__init__()
        cins = (3,) + tuple(hidden[:-1])
        self.patch_embeddings = nn.ModuleList(
            OverlapPatchEmbed(patch[i], stride[i], cins[i], hidden[i]) for i in range(4))
        self.block = nn.ModuleList(
            nn.ModuleList(SegformerLayer(hidden[i], heads[i], sr[i]) for _ in range(depths[i]))
            for i in range(4))
        self.layer_norm = nn.ModuleList(nn.LayerNorm(h) for h in hidden)
        # decode head
        self.linear_c = nn.ModuleList(nn.Linear(h, decoder_hidden) for h in hidden)
        self.linear_fuse = nn.Conv2d(decoder_hidden * 4, decoder_hidden, 1, bias=False)
        self.batch_norm = nn.BatchNorm2d(decoder_hidden)
        self.activation = nn.ReLU()
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Conv2d(decoder_hidden, num_labels, 1)

    def forward(self, x):
        b = x.shape[0]
        feats = []
        for embed, blocks, norm in zip(self.patch_embeddings, self.block, self.layer_norm):
            x, h, w = embed(x)
            for blk in blocks:
                x = blk(x, h, w)
            x = norm(x).reshape(b, h, w, -1).permute(0, 3, 1, 2).contiguous()
            feats.append(x)
        size = feats[0].shape[2:]
        outs = []
        for f, mlp in zip(feats, self.linear_c):
            hh, ww = f.shape[2], f.shape[3]
            f = mlp(f.flatten(2).transpose(1, 2))
            f = f.permute(0, 2, 1).reshape(b, -1, hh, ww)
            f = F.interpolate(f, size=size, mode="bilinear", align_corners=False)
            outs.append(f)
        y = self.linear_fuse(torch.cat(outs[::-1], dim=1))
        y = self.dropout(self.activation(self.batch_norm(y)))
        return self.classifier(y)


def make_segformer_b0(image=64, num_labels=19, seed=0):
    torch.manual_seed(seed)
    m = SegformerB0(num_labels)
    _randomize_layernorm(m, torch.Generator().manual_seed(seed + 1))
    randomize_batchnorm(m, torch.Generator().manual_seed(seed + 2))
    return m.eval(), _image_inputs((3, image, image))


# ---- Qwen2 decoder layer ------------------------------------------------------------

class RMSNorm(nn.Module):
    def __init__(self, hidden, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
        self.eps = eps

    def forward(self, x):
        dtype = x.dtype
        x = x.to(torch.float32)
        var = x.pow(2).mean(-1, keepdim=True)
        x = x * torch.rsqrt(var + self.eps)
        return self.weight * x.to(dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    b, kvh, s, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, kvh, n_rep, s, d).reshape(b, kvh * n_rep, s, d)


class Qwen2Layer(nn.Module):
    def __init__(self, hidden=128, heads=4, kv_heads=2, inter=256, theta=10000.0, eps=1e-6):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.input_layernorm = RMSNorm(hidden, eps)
        self.q_proj = nn.Linear(hidden, heads * self.head_dim, bias=True)
        self.k_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=True)
        self.v_proj = nn.Linear(hidden, kv_heads * self.head_dim, bias=True)
        self.o_proj = nn.Linear(heads * self.head_dim, hidden, bias=False)
        self.post_attention_layernorm = RMSNorm(hidden, eps)
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)
        self.norm = RMSNorm(hidden, eps)
        inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.int64).float() / self.head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def rotary(self, x, seq):
        pos = torch.arange(seq, device=x.device).unsqueeze(0).float()            # (1, S)
        freqs = (self.inv_freq[None, :, None].float() @ pos[:, None, :]).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)

    def forward(self, x):
        b, s, _ = x.shape
        cos, sin = self.rotary(x, s)
        cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
        residual = x
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(b, s, -1, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = self.heads // self.kv_heads
        a = F.scaled_dot_product_attention(q, repeat_kv(k, rep), repeat_kv(v, rep), is_causal=True)
        a = a.transpose(1, 2).reshape(b, s, -1)
        h = residual + self.o_proj(a)
        residual = h
        m = self.post_attention_layernorm(h)
        m = self.down_proj(F.silu(self.gate_proj(m)) * self.up_proj(m))
        return self.norm(residual + m)


def make_qwen2_layer(seq=16, hidden=128, seed=0):
    torch.manual_seed(seed)
    m = Qwen2Layer(hidden)
    with torch.no_grad():
        g = torch.Generator().manual_seed(seed + 1)
        for mod in m.modules():
            if isinstance(mod, RMSNorm):
                mod.weight.copy_(torch.empty(mod.weight.shape).uniform_(0.5, 1.5, generator=g))
    return m.eval(), _image_inputs((seq, hidden))


ZOO = {
    "resnet50": make_resnet50,
    "mobilenet_v2": make_mobilenet_v2,
    "vit_tiny": make_vit_tiny,
    "bert": make_bert,
    "segformer_b0": make_segformer_b0,
    "qwen2_layer": make_qwen2_layer,
}

# Models that use F.scaled_dot_product_attention (the "core_sdpa" IR level keeps it).
USES_SDPA = ("vit_tiny", "bert", "qwen2_layer")


def make(name):
    """(model, example_inputs) of a zoo model by name."""
    return ZOO[name]()


def num_params(model):
    return sum(p.numel() for p in model.parameters())
