"""Architectures of the `transformers` package for the real-model suite
(test/test_hf.py), built from small configs with random weights: nothing is
downloaded.

Each entry of ARCHS is (name, family, config class, config keyword
arguments, model class, input kind); parameters that transformers
initializes to zeros are drawn at random too. The model is the bare
backbone (its last hidden state is the output) unless a row says why not;
"A.b.c" names a submodule (an encoder-decoder's encoder). Sizes are small so that one compile takes seconds: hidden
32-64, 2 layers, 2-4 heads, vocabulary 128, sequences of 8 tokens, images of
32x32, 1600 audio samples.

Input kinds:
    text      input_ids (1, 8) int64 and attention_mask (1, 8) int64 with the
              last two positions padded (so the mask is used)
    ids       input_ids (1, 8) only (decoders: causal mask, no padding)
    image     pixel_values (1, 3, 32, 32)
    audio     input_values (1, 1600)
    features  input_features (1, 80, 3000)/... given per model

SKIP_EXPORT lists architectures that torch.export itself cannot export, with
torch's error: not doccc failures, and not silently dropped (the suite shows
them as expected failures of torch.export).
"""

import torch

SEQ = 8
TEXT = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=64, max_position_embeddings=64)
DEC = dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
           num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64)

# name, family, config class, config kwargs, model class, input kind
ARCHS = [
    # encoders
    ("bert", "encoder", "BertConfig", TEXT, "BertModel", "text"),
    ("roberta", "encoder", "RobertaConfig", dict(TEXT, pad_token_id=1), "RobertaModel", "text"),
    ("distilbert", "encoder", "DistilBertConfig",
     dict(vocab_size=128, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64),
     "DistilBertModel", "text"),
    ("albert", "encoder", "AlbertConfig", dict(TEXT, embedding_size=16), "AlbertModel", "text"),
    ("electra", "encoder", "ElectraConfig", dict(TEXT, embedding_size=16), "ElectraModel", "text"),
    ("deberta_v2", "encoder", "DebertaV2Config", TEXT, "DebertaV2Model", "text"),
    ("deberta", "encoder", "DebertaConfig", TEXT, "DebertaModel", "text"),
    ("mpnet", "encoder", "MPNetConfig", TEXT, "MPNetModel", "text"),
    ("xlm_roberta", "encoder", "XLMRobertaConfig", dict(TEXT, pad_token_id=1), "XLMRobertaModel", "text"),
    ("modernbert", "encoder", "ModernBertConfig",
     dict(vocab_size=128, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
          intermediate_size=64, max_position_embeddings=64, pad_token_id=0, bos_token_id=1,
          eos_token_id=2, cls_token_id=1, sep_token_id=2), "ModernBertModel", "text"),
    ("convbert", "encoder", "ConvBertConfig", dict(TEXT, embedding_size=32), "ConvBertModel", "text"),
    ("mobilebert", "encoder", "MobileBertConfig",
     dict(TEXT, embedding_size=16, intra_bottleneck_size=16, true_hidden_size=16,
          num_feedforward_networks=2), "MobileBertModel", "text"),
    ("squeezebert", "encoder", "SqueezeBertConfig", dict(TEXT, embedding_size=32), "SqueezeBertModel", "text"),
    ("roformer", "encoder", "RoFormerConfig", dict(TEXT, embedding_size=32), "RoFormerModel", "text"),
    ("big_bird", "encoder", "BigBirdConfig", dict(TEXT, attention_type="original_full"), "BigBirdModel", "text"),
    ("canine", "encoder", "CanineConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                              intermediate_size=64, max_position_embeddings=64), "CanineModel", "ids"),
    # torch.export cannot export it (test_hf.EXPORT_FAILS): its forward
    # branches on whether any token has global attention (.item())
    ("longformer", "encoder", "LongformerConfig", dict(TEXT, attention_window=4, pad_token_id=1),
     "LongformerModel", "text"),
    ("clip_text", "encoder", "CLIPTextConfig", TEXT, "CLIPTextModel", "text"),
    # decoders
    ("gpt2", "decoder", "GPT2Config", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=2, n_positions=64),
     "GPT2Model", "ids"),
    ("gpt_neo", "decoder", "GPTNeoConfig",
     dict(vocab_size=128, hidden_size=32, num_layers=2, num_heads=2, max_position_embeddings=64,
          attention_types=[[["global", "local"], 1]], window_size=4), "GPTNeoModel", "ids"),
    ("gpt_neox", "decoder", "GPTNeoXConfig", TEXT, "GPTNeoXModel", "ids"),
    ("gptj", "decoder", "GPTJConfig", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=2, n_positions=64,
                                           rotary_dim=8), "GPTJModel", "ids"),
    ("opt", "decoder", "OPTConfig", dict(vocab_size=128, hidden_size=32, num_hidden_layers=2,
                                         num_attention_heads=2, ffn_dim=64, max_position_embeddings=64,
                                         word_embed_proj_dim=32), "OPTModel", "ids"),
    ("bloom", "decoder", "BloomConfig", dict(vocab_size=128, hidden_size=32, n_layer=2, n_head=2),
     "BloomModel", "ids"),
    ("llama", "decoder", "LlamaConfig", DEC, "LlamaModel", "ids"),
    ("qwen2", "decoder", "Qwen2Config", DEC, "Qwen2Model", "ids"),
    ("qwen3", "decoder", "Qwen3Config", dict(DEC, head_dim=8), "Qwen3Model", "ids"),
    ("mistral", "decoder", "MistralConfig", DEC, "MistralModel", "ids"),
    ("gemma", "decoder", "GemmaConfig", dict(DEC, head_dim=8), "GemmaModel", "ids"),
    ("gemma2", "decoder", "Gemma2Config", dict(DEC, head_dim=8), "Gemma2Model", "ids"),
    ("phi", "decoder", "PhiConfig", DEC, "PhiModel", "ids"),
    ("phi3", "decoder", "Phi3Config", dict(DEC, pad_token_id=0, bos_token_id=1, eos_token_id=2), "Phi3Model", "ids"),
    ("falcon", "decoder", "FalconConfig", dict(vocab_size=128, hidden_size=32, num_hidden_layers=2,
                                               num_attention_heads=4), "FalconModel", "ids"),
    ("stablelm", "decoder", "StableLmConfig", DEC, "StableLmModel", "ids"),
    ("olmo", "decoder", "OlmoConfig", DEC, "OlmoModel", "ids"),
    ("codegen", "decoder", "CodeGenConfig", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=2,
                                                 n_positions=64, rotary_dim=8), "CodeGenModel", "ids"),
    ("gpt_bigcode", "decoder", "GPTBigCodeConfig", dict(vocab_size=128, n_embd=32, n_layer=2, n_head=2,
                                                        n_positions=64, multi_query=True), "GPTBigCodeModel", "ids"),
    ("mpt", "decoder", "MptConfig", dict(vocab_size=128, d_model=32, n_layers=2, n_heads=2, max_seq_len=64),
     "MptModel", "ids"),
    ("cohere", "decoder", "CohereConfig", DEC, "CohereModel", "ids"),
    # encoder-decoder encoders
    ("t5_encoder", "enc-dec", "T5Config", dict(vocab_size=128, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                                               num_heads=4), "T5EncoderModel", "text"),
    ("bart_encoder", "enc-dec", "BartConfig", dict(vocab_size=128, d_model=32, encoder_layers=2,
                                                   encoder_attention_heads=2, encoder_ffn_dim=64,
                                                   decoder_layers=1, decoder_attention_heads=2,
                                                   decoder_ffn_dim=64, max_position_embeddings=64),
     "BartModel.encoder", "text"),
    ("marian_encoder", "enc-dec", "MarianConfig", dict(vocab_size=128, d_model=32, encoder_layers=2,
                                                       encoder_attention_heads=2, encoder_ffn_dim=64,
                                                       decoder_layers=1, decoder_attention_heads=2,
                                                       decoder_ffn_dim=64, max_position_embeddings=64,
                                                       pad_token_id=0, decoder_start_token_id=0),
     "MarianMTModel.model.encoder", "text"),
    # vision
    ("vit", "vision", "ViTConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                        intermediate_size=64, image_size=32, patch_size=8), "ViTModel", "image"),
    ("deit", "vision", "DeiTConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                          intermediate_size=64, image_size=32, patch_size=8), "DeiTModel", "image"),
    ("beit", "vision", "BeitConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                          intermediate_size=64, image_size=32, patch_size=8,
                                          use_relative_position_bias=True), "BeitModel", "image"),
    ("dinov2", "vision", "Dinov2Config", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                              mlp_ratio=2, image_size=32, patch_size=8), "Dinov2Model", "image"),
    ("swin", "vision", "SwinConfig", dict(embed_dim=16, depths=[1, 1], num_heads=[2, 2], image_size=32,
                                          patch_size=4, window_size=4), "SwinModel", "image"),
    ("convnext", "vision", "ConvNextConfig", dict(hidden_sizes=[16, 32], depths=[1, 1], num_stages=2),
     "ConvNextModel", "image"),
    ("resnet", "vision", "ResNetConfig", dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1]),
     "ResNetModel", "image"),
    ("mobilenet_v2", "vision", "MobileNetV2Config", dict(depth_multiplier=0.35, image_size=32),
     "MobileNetV2Model", "image"),
    ("regnet", "vision", "RegNetConfig", dict(embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1],
                                              groups_width=8), "RegNetModel", "image"),
    ("segformer", "vision", "SegformerConfig", dict(hidden_sizes=[16, 32], depths=[1, 1], num_encoder_blocks=2,
                                                    num_attention_heads=[1, 2], sr_ratios=[2, 1],
                                                    patch_sizes=[7, 3], strides=[4, 2], decoder_hidden_size=32),
     "SegformerModel", "image"),
    ("clip_vision", "vision", "CLIPVisionConfig", dict(hidden_size=32, num_hidden_layers=2,
                                                       num_attention_heads=2, intermediate_size=64,
                                                       image_size=32, patch_size=8), "CLIPVisionModel", "image"),
    ("bit", "vision", "BitConfig", dict(embedding_size=32, hidden_sizes=[32, 64], depths=[1, 1], num_groups=8,
                                        layer_type="preactivation"), "BitModel", "image"),
    ("swinv2", "vision", "Swinv2Config", dict(embed_dim=16, depths=[1, 1], num_heads=[2, 2], image_size=32,
                                              patch_size=4, window_size=4), "Swinv2Model", "image"),
    # the classifier, whose logits come through the pooler: AvgPool2d(hidden_dim, ceil_mode=True) over the
    # final 8x8 map, a window wider than its input (the bare model's last hidden state is before it)
    ("efficientnet", "vision", "EfficientNetConfig",
     dict(image_size=32, width_coefficient=0.05, depth_coefficient=1.0, kernel_sizes=[3, 5], in_channels=[32, 16],
          out_channels=[16, 24], strides=[1, 2], num_block_repeats=[1, 2], expand_ratios=[1, 6], hidden_dim=64),
     "EfficientNetForImageClassification", "image"),
    # audio
    ("wav2vec2", "audio", "Wav2Vec2Config", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                                 intermediate_size=64, conv_dim=(16, 16, 16),
                                                 conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                                                 num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2),
     "Wav2Vec2Model", "audio"),
    ("hubert", "audio", "HubertConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                             intermediate_size=64, conv_dim=(16, 16, 16),
                                             conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                                             num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=2),
     "HubertModel", "audio"),
    ("whisper_encoder", "audio", "WhisperConfig", dict(vocab_size=128, d_model=32, encoder_layers=2,
                                                        encoder_attention_heads=2, encoder_ffn_dim=64,
                                                        decoder_layers=1, decoder_attention_heads=2,
                                                        decoder_ffn_dim=64, num_mel_bins=16,
                                                        max_source_positions=32, pad_token_id=0,
                                                        bos_token_id=1, eos_token_id=2,
                                                        decoder_start_token_id=1),
     "WhisperModel.encoder", "mel"),
    ("wavlm", "audio", "WavLMConfig", dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                           intermediate_size=64, conv_dim=(16, 16, 16), conv_stride=(5, 2, 2),
                                           conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                                           num_conv_pos_embedding_groups=2), "WavLMModel", "audio"),
    # mixtures of experts, at transformers' default experts implementation
    # ("grouped_mm": on the CPU torch.ops.transformers.grouped_mm_fallback
    # over offsets from sort, histc and cumsum): 4 experts, top 2
    ("mixtral", "moe", "MixtralConfig", dict(DEC, num_local_experts=4, num_experts_per_tok=2), "MixtralModel", "ids"),
    ("qwen2_moe", "moe", "Qwen2MoeConfig", dict(DEC, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
                                                shared_expert_intermediate_size=32), "Qwen2MoeModel", "ids"),
    ("qwen3_moe", "moe", "Qwen3MoeConfig", dict(DEC, head_dim=8, num_experts=4, num_experts_per_tok=2,
                                                moe_intermediate_size=32), "Qwen3MoeModel", "ids"),
    ("olmoe", "moe", "OlmoeConfig", dict(DEC, num_experts=4, num_experts_per_tok=2, pad_token_id=1, bos_token_id=None,
                                         eos_token_id=2), "OlmoeModel", "ids"),
    ("gpt_oss", "moe", "GptOssConfig", dict(DEC, head_dim=8, num_local_experts=4, num_experts_per_tok=2,
                                            sliding_window=4), "GptOssModel", "ids"),
    # hybrids
    ("mamba", "hybrid", "MambaConfig", dict(vocab_size=128, hidden_size=32, num_hidden_layers=2,
                                            state_size=8, expand=2, conv_kernel=4), "MambaModel", "ids"),
    ("falcon_mamba", "hybrid", "FalconMambaConfig", dict(vocab_size=128, hidden_size=32, num_hidden_layers=2,
                                                         state_size=8, expand=2, conv_kernel=4),
     "FalconMambaModel", "ids"),
]


def make(name):
    """(model in eval mode, inputs tuple) for one ARCHS entry, seeded."""
    import transformers
    row = next(r for r in ARCHS if r[0] == name)
    _, _, cfg_cls, kw, model_cls, kind = row
    torch.manual_seed(0)
    cfg = getattr(transformers, cfg_cls)(**kw)
    parts = model_cls.split(".")
    cls = getattr(transformers, parts[0])
    # the architecture's SDPA attention where it has one (what users get by
    # default), else its eager attention
    cfg._attn_implementation = "sdpa" if getattr(cls, "_supports_sdpa", False) else "eager"
    model = cls(cfg)
    # parameters transformers initializes to zeros (biases, relative
    # position tables, ...) get small random values: a zero would hide a
    # wrong computation of what it feeds
    with torch.no_grad():
        for p in model.parameters():
            if p.is_floating_point() and not p.any():
                p.normal_(0.0, 0.1)
    for p in parts[1:]:
        model = getattr(model, p)
    model.eval()
    g = torch.Generator().manual_seed(1)
    if kind in ("text", "ids"):
        ids = torch.randint(3, 128, (1, SEQ), generator=g)
        if kind == "text":
            mask = torch.ones(1, SEQ, dtype=torch.int64)
            mask[:, -2:] = 0
            return _Wrap(model, ("input_ids", "attention_mask")), (ids, mask)
        return _Wrap(model, ("input_ids",)), (ids,)
    if kind == "image":
        return _Wrap(model, ("pixel_values",)), (torch.randn(1, 3, 32, 32, generator=g),)
    if kind == "audio":
        return _Wrap(model, ("input_values",)), (torch.randn(1, 1600, generator=g),)
    if kind == "mel":
        return _Wrap(model, ("input_features",)), (torch.randn(1, 16, 64, generator=g),)
    raise ValueError(kind)


class _Wrap(torch.nn.Module):
    """Calls the model with keyword inputs and returns its first output
    tensor (the last hidden state)."""

    def __init__(self, model, names):
        super().__init__()
        self.model = model
        self.names = names

    def forward(self, *xs):
        out = self.model(**dict(zip(self.names, xs)))
        if isinstance(out, torch.Tensor):
            return out
        return out[0]
