"""Export a small decoder-only LM with its KV cache for doccc.

    python3 export.py OUTDIR [--checkpoint DIR] [--tokens N] [--max-cache N]

Without --checkpoint: a Llama-shaped model built from a config with random
weights (seed 0; nothing is downloaded). With --checkpoint DIR: any
transformers checkpoint saved with save_pretrained (Llama, Qwen2, Mistral,
...), loaded from that folder.

Writes OUTDIR/llm.pt2, the program transformers' own export path makes
(TorchExportableModuleForDecoderOnlyLM: the static cache, the sequence
length a run-time dim, so one library prefills and decodes),
OUTDIR/prompt.txt (the prompt's token ids) and OUTDIR/tokens_ref.txt (the
tokens eager generates greedily from it: what the C program must print).
"""
import argparse
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, GenerationConfig, LlamaConfig, LlamaForCausalLM
from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM

PROMPT = [1, 15, 234, 7, 42, 99, 3, 180]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--checkpoint")
    ap.add_argument("--tokens", type=int, default=32)
    ap.add_argument("--max-cache", type=int, default=128)
    a = ap.parse_args()
    out = Path(a.outdir)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(0)
    if a.checkpoint:
        model = AutoModelForCausalLM.from_pretrained(a.checkpoint, torch_dtype=torch.float32)
    else:
        cfg = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=a.max_cache)
        model = LlamaForCausalLM(cfg)
    model.eval()
    n = a.max_cache
    model.generation_config = GenerationConfig(use_cache=True, cache_implementation="static", max_length=n,
                                               cache_config={"batch_size": 1, "max_cache_len": n})
    prompt = [t % model.config.vocab_size for t in PROMPT]
    ids = torch.tensor([prompt])
    seq = torch.export.Dim("seq", min=1, max=n)
    ep = TorchExportableModuleForDecoderOnlyLM(model, batch_size=1, max_cache_len=n).export(
        input_ids=ids, cache_position=torch.arange(len(prompt)),
        dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})
    torch.export.save(ep, str(out / "llm.pt2"))
    with torch.no_grad():
        ref = model.generate(ids, max_new_tokens=a.tokens, do_sample=False)[0, len(prompt):].tolist()
    (out / "prompt.txt").write_text(" ".join(map(str, prompt)) + "\n")
    (out / "tokens_ref.txt").write_text(" ".join(map(str, ref)) + "\n")
    print(f"wrote {out / 'llm.pt2'}: prompt {prompt}, {len(ref)} reference tokens")


if __name__ == "__main__":
    main()
