"""Language models that keep state across calls, exported the way their
libraries export them, with a step-by-step eager reference: the models for
the state suite (a KV cache, a recurrent state). Nothing is downloaded: every
model is built from a small config with random weights at a fixed seed.

Entries of ZOO, each one or two programs ("parts"):

    decoder-only LMs (DECODERS): transformers' TorchExportableModuleForDecoderOnlyLM
        with its static cache (the KV cache and each layer's cumulative_length
        are buffers the program writes), exported with the sequence length
        dynamic, so one program serves prefill (seq > 1) and decode (seq 1).
        Inputs input_ids [1, seq] int64 and cache_position [seq] int64
        (positions start..start+seq-1), output logits [1, seq, vocab].
        Parts: "model".  Gemma 2 takes transformers' hybrid path
        (TorchExportableModuleWithHybridCache: its sliding-window layers are
        plain static layers with a sliding mask).
    seq2seq (SEQ2SEQ): transformers' Seq2SeqLMExportableModule. Parts
        "encoder" (stateless: T5 input_ids [1, seq] with seq dynamic;
        Whisper input_features [1, mels, 64], static: Whisper's encoder wants
        exactly 2*max_source_positions frames) and "decoder" (static
        self-attention cache as buffers; decoder_input_ids [1, 1],
        encoder_hidden_states [1, enc, d] with enc dynamic, cache_position
        [1]): the decoder decodes one token a call, as transformers exports it.
        In transformers 5.24 Seq2SeqLMExportableModule cannot export Whisper
        as is (its encoder wrapper calls encoder(input_ids=...), Whisper's
        encoder takes input_features; its decoder wrapper reads model.lm_head,
        Whisper's head is proj_out): the encoder is exported here with
        transformers' wrapper pattern on input_features, and proj_out is
        aliased as lm_head for the decoder.
    cache as input and output (CACHE_IO), stateless: "llama_dyncache".
        Parts "prefill": transformers' export_with_dynamic_cache (an empty
        DynamicCache in, so no cache input; inputs input_ids [1, 5] and
        attention_mask [1, 5], both static; outputs logits and each layer's
        keys and values [1, kv_heads, 5, head_dim]), and "decode": the same
        model exported here with a filled DynamicCache as input (inputs
        input_ids [1, seq], then every layer's keys, then every layer's
        values, [1, kv_heads, past, head_dim]; seq and past dynamic; outputs
        logits [1, seq, vocab] and the caches grown to past + seq).
    streaming non-LLMs (STREAMING): "gru" (embedding, nn.GRU, head: the GRU's
        hidden state is a buffer forward overwrites with copy_) and
        "causal_conv" (embedding, a causal Conv1d whose last kernel-1 input
        frames are a buffer forward overwrites). Input input_ids [1, seq]
        with seq dynamic, output logits [1, seq, vocab]. Parts: "model".

Functions:
    build(name)                  the eager model (the original HF model, or
                                 the torch module of STREAMING)
    programs(name, ir)           {part: ExportedProgram}; ir "training" is
                                 torch.export's default IR, "core" is
                                 run_decompositions() (Core ATen); cached
    save(name, ir, directory)    {part: path of the .pt2} (torch.export.save)
    eager_steps(name, ir)        [Step]: the exported programs run through
                                 ep.module(), step by step: the prompt's
                                 prefill, then greedy decoding to NEW_TOKENS
                                 new tokens
    hf_greedy(name)              (tokens, [last-position logits]) of the
                                 original model, run eagerly by full
                                 recomputation (no cache) at every step
    verify(name, ir)             eager_steps' tokens equal hf_greedy's and
                                 its logits agree; returns the steps

A Step is (part, names, inputs, logits, token): the part called, the user
inputs' names and numpy values in the program's order, the logits it
returned (numpy) and the greedy token taken from its last position (None for
an encoder step, whose output is its hidden states, in logits). A test feeds
the steps' inputs to compiled libraries in order (one instance for the whole
sequence: the state carries over) and compares each output with the logits.
For CACHE_IO the outputs also hold the caches: Step.outputs has them all.
"""

import copy
from collections import namedtuple

import numpy as np
import torch

VOCAB = 128
MAX_CACHE = 48                   # the static caches' length
PROMPT = [5, 17, 42, 9, 77]      # token ids of the prompt (prefill)
NEW_TOKENS = 32                  # greedy tokens after it: 1 from the prefill, 31 decode steps

_DEC = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, intermediate_size=64, max_position_embeddings=64)

# name -> (config class, config keyword arguments, model class)
DECODERS = {
    "llama": ("LlamaConfig", _DEC, "LlamaForCausalLM"),
    "qwen2": ("Qwen2Config", _DEC, "Qwen2ForCausalLM"),
    "qwen3": ("Qwen3Config", dict(_DEC, head_dim=8), "Qwen3ForCausalLM"),
    # a window shorter than prompt + generation, so the sliding mask matters
    "mistral": ("MistralConfig", dict(_DEC, sliding_window=16), "MistralForCausalLM"),
    "phi3": ("Phi3Config", dict(_DEC, pad_token_id=0, bos_token_id=1, eos_token_id=2), "Phi3ForCausalLM"),
    # hybrid: sliding and full attention layers alternate; window 8 < 37 tokens
    "gemma2": ("Gemma2Config", dict(_DEC, head_dim=8, sliding_window=8), "Gemma2ForCausalLM"),
    "olmo": ("OlmoConfig", _DEC, "OlmoForCausalLM"),
    # SmolLM's shape: Llama with tied embeddings, 3 query heads to 1 key/value head
    "smollm": ("LlamaConfig", dict(_DEC, hidden_size=48, num_attention_heads=3, num_key_value_heads=1,
                                   tie_word_embeddings=True), "LlamaForCausalLM"),
}
SEQ2SEQ = {
    "t5": ("T5Config", dict(vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4,
                            decoder_start_token_id=0, pad_token_id=0, eos_token_id=1,
                            # tied, T5 scales the decoder's output by d_model**-0.5 before
                            # lm_head; transformers' exported decoder applies lm_head alone
                            tie_word_embeddings=False),
           "T5ForConditionalGeneration"),
    "whisper": ("WhisperConfig", dict(vocab_size=VOCAB, d_model=32, encoder_layers=2, encoder_attention_heads=2,
                                      encoder_ffn_dim=64, decoder_layers=2, decoder_attention_heads=2,
                                      decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=32,
                                      max_target_positions=64, pad_token_id=0, bos_token_id=1,
                                      eos_token_id=2, decoder_start_token_id=1),
                "WhisperForConditionalGeneration"),
}
CACHE_IO = {"llama_dyncache": "llama"}
STREAMING = ("gru", "causal_conv")
ZOO = list(DECODERS) + list(SEQ2SEQ) + list(CACHE_IO) + list(STREAMING)

Step = namedtuple("Step", "part names inputs logits token outputs")


# ---- models ---------------------------------------------------------------------

def _randomize(model):
    """Parameters transformers initializes to zeros get small random values (a
    zero would hide a wrong computation of what it feeds, as in hf_zoo), and
    the weights are drawn wider than transformers' 0.02, so that the logits
    spread and greedy decoding wanders over the vocabulary instead of
    repeating one token."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if not p.is_floating_point():
                continue
            if not p.any():
                p.normal_(0.0, 0.1)
            elif p.dim() >= 2:
                p.normal_(0.0, 0.15)
    return model


class StreamingGRU(torch.nn.Module):
    """A token GRU LM that streams: the hidden state is a buffer overwritten in place."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 16)
        self.gru = torch.nn.GRU(16, 32, batch_first=True)
        self.head = torch.nn.Linear(32, VOCAB)
        self.register_buffer("h", torch.zeros(1, 1, 32))

    def forward(self, input_ids):
        y, h = self.gru(self.emb(input_ids), self.h)
        self.h.copy_(h)
        return self.head(y)


class StreamingConv(torch.nn.Module):
    """A token LM of one causal Conv1d that streams: the last kernel-1 input
    frames are a buffer, prepended to the next call's input and overwritten."""

    K = 4

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(VOCAB, 16)
        self.conv = torch.nn.Conv1d(16, 32, self.K)
        self.head = torch.nn.Linear(32, VOCAB)
        self.register_buffer("frames", torch.zeros(1, 16, self.K - 1))

    def forward(self, input_ids):
        x = torch.cat([self.frames, self.emb(input_ids).transpose(1, 2)], dim=2)
        self.frames.copy_(x[:, :, -(self.K - 1):])
        return self.head(torch.relu(self.conv(x)).transpose(1, 2))


def build(name):
    """The eager model of a ZOO entry, in eval mode, at a fixed seed."""
    import transformers
    from transformers import GenerationConfig
    torch.manual_seed(0)
    if name in STREAMING:
        return _randomize({"gru": StreamingGRU, "causal_conv": StreamingConv}[name]()).eval()
    base = CACHE_IO.get(name, name)
    cfg_cls, kw, model_cls = DECODERS.get(base) or SEQ2SEQ[base]
    cfg = getattr(transformers, cfg_cls)(**kw)
    cls = getattr(transformers, model_cls)
    # SDPA attention where the architecture has it, what users get by default
    cfg._attn_implementation = "sdpa" if getattr(cls, "_supports_sdpa", False) else "eager"
    model = _randomize(cls(cfg)).eval()
    if base in DECODERS:
        model.generation_config = GenerationConfig(
            use_cache=True, cache_implementation="static", max_length=MAX_CACHE,
            cache_config={"batch_size": 1, "max_cache_len": MAX_CACHE})
    if name == "whisper":
        model.lm_head = model.proj_out  # what Seq2SeqLMDecoderExportableModuleWithStaticCache reads
    return model


def _whisper_features():
    g = torch.Generator().manual_seed(1)
    cfg = SEQ2SEQ["whisper"][1]
    return torch.randn(1, cfg["num_mel_bins"], 2 * cfg["max_source_positions"], generator=g)


class _WhisperEncoder(torch.nn.Module):
    """Seq2SeqLMEncoderExportableModule's pattern on Whisper's input."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder

    def forward(self, input_features):
        return self.encoder(input_features=input_features).last_hidden_state


class _CacheIO(torch.nn.Module):
    """A causal LM whose DynamicCache is its input and output: logits and the
    grown caches (the caches flattened as register_dynamic_cache_export_support
    flattens them: every layer's keys, then every layer's values)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, cache):
        out = self.model(input_ids=input_ids, cache=cache, use_cache=True)
        return out.logits, out.cache


def _dynamic_cache(keys, values):
    from transformers import DynamicCache
    return DynamicCache([(k, v, None) for k, v in zip(keys, values)])


# ---- exports --------------------------------------------------------------------

_programs = {}


def _export_parts(name):
    """{part: ExportedProgram} at torch.export's default IR."""
    model = build(name)
    seq = torch.export.Dim("seq", min=1, max=MAX_CACHE - 1)
    ids = torch.tensor([PROMPT])
    if name in DECODERS:
        from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM
        w = TorchExportableModuleForDecoderOnlyLM(model)
        with torch.no_grad():
            ep = w.export(input_ids=ids, cache_position=torch.arange(len(PROMPT)),
                          dynamic_shapes={"input_ids": {1: seq}, "cache_position": {0: seq}})
        return {"model": ep}
    if name in SEQ2SEQ:
        from transformers.integrations.executorch import Seq2SeqLMExportableModule
        s = Seq2SeqLMExportableModule(model, max_hidden_seq_length=64, max_cache_length=MAX_CACHE)
        if name == "whisper":
            x = _whisper_features()
            with torch.no_grad():
                enc = torch.export.export(_WhisperEncoder(model.get_encoder()).eval(), (x,))
        else:
            x = ids
            enc = s._export_encoder(x)
        with torch.no_grad():
            hidden = enc.module()(x)
        dec = s._export_decoder(torch.tensor([[model.config.decoder_start_token_id]]), hidden,
                                torch.tensor([0]))
        return {"encoder": enc, "decoder": dec}
    if name in CACHE_IO:
        from transformers.integrations.executorch import export_with_dynamic_cache, \
            register_dynamic_cache_export_support
        prefill = export_with_dynamic_cache(model, ids, torch.ones_like(ids))
        register_dynamic_cache_export_support()
        cfg = model.config
        hd = cfg.hidden_size // cfg.num_attention_heads
        g = torch.Generator().manual_seed(2)
        kv = [torch.randn(1, cfg.num_key_value_heads, len(PROMPT), hd, generator=g)
              for _ in range(2 * cfg.num_hidden_layers)]
        n = cfg.num_hidden_layers
        past = torch.export.Dim("past", min=1, max=MAX_CACHE - 1)
        cache_dims = [[{2: past}] * n, [{2: past}] * n]
        with torch.no_grad():
            # two example tokens: an example of 1 would specialize seq to 1
            decode = torch.export.export(_CacheIO(model), (ids[:, :2], _dynamic_cache(kv[:n], kv[n:])),
                                         dynamic_shapes=({1: seq}, cache_dims), strict=False)
        return {"prefill": prefill, "decode": decode}
    # torch.export specializes nn.GRU's sequence length (its time loop is
    # unrolled): the GRU streams one token a call, the convolution any number
    with torch.no_grad():
        if name == "gru":
            ep = torch.export.export(model, (ids[:, :1],))
        else:
            ep = torch.export.export(model, (ids,), dynamic_shapes=({1: seq},))
    return {"model": ep}


# name -> why its programs have no Core ATen form
CORE_FAILS = {
    # torch 2.13: run_decompositions() of both parts stops in the verifier
    # ("SpecViolationError: Constant tensor lifted_tensor_N is not in the
    # constants dictionary"): the constants are DynamicLayer's initial keys
    # and values, torch.tensor([]), lifted by the non-strict export
    "llama_dyncache": "torch's run_decompositions() fails on the non-strict export's lifted constants",
}


def programs(name, ir="training"):
    """{part: ExportedProgram} of a ZOO entry at IR level ir ("training":
    torch.export's default IR; "core": run_decompositions()). Cached.
    Raises NotImplementedError for the entries of CORE_FAILS at "core"."""
    if ir not in ("training", "core"):
        raise ValueError(f"ir must be 'training' or 'core', not {ir!r}")
    if ir == "core" and name in CORE_FAILS:
        raise NotImplementedError(f"{name}: no Core ATen program: {CORE_FAILS[name]}")
    if (name, "training") not in _programs:
        _programs[name, "training"] = _export_parts(name)
    if (name, ir) not in _programs:
        _programs[name, ir] = {p: ep.run_decompositions() for p, ep in _programs[name, "training"].items()}
    return _programs[name, ir]


def save(name, ir, directory):
    """torch.export.save each part to DIRECTORY/NAME[_PART]_IR.pt2; {part: path}."""
    from pathlib import Path
    paths = {}
    parts = programs(name, ir)
    for part, ep in parts.items():
        stem = name if len(parts) == 1 else f"{name}_{part}"
        p = Path(directory) / f"{stem}_{ir}.pt2"
        torch.export.save(ep, str(p))
        paths[part] = p
    return paths


class _StateAsIO(torch.nn.Module):
    """A decoder wrapper of TorchExportableModuleForDecoderOnlyLM with its
    static cache as inputs and outputs instead of buffers: each layer's keys,
    values and cumulative_length come in (copied, so that the graph writes no
    input) and their new values go out after the logits. The graph is the
    stateful program's, ops for ops, without state."""

    def __init__(self, w):
        super().__init__()
        self.w = w
        self.cache = w.static_cache if hasattr(w, "static_cache") else w.cache

    def forward(self, input_ids, cache_position, *state):
        for i, layer in enumerate(self.cache.layers):
            layer.keys, layer.values, layer.cumulative_length = (t.clone() for t in state[3 * i:3 * i + 3])
        logits = self.w(input_ids=input_ids, cache_position=cache_position)
        return (logits,) + tuple(t for layer in self.cache.layers
                                 for t in (layer.keys, layer.values, layer.cumulative_length))


def state_as_io(name, ir="training"):
    """(ExportedProgram, initial state [tensors]) of a decoder of DECODERS
    with its state as inputs and outputs (_StateAsIO): a stateless program
    that doccc compiles today, to test the lowerings of a decoder at run-time
    sequence lengths. Inputs input_ids, cache_position, then the state; outputs
    the logits, then the new state. Cached."""
    key = (name, "state_as_io", ir)
    if key not in _programs:
        if ir == "core":
            ep, state = state_as_io(name, "training")
            _programs[key] = (ep.run_decompositions(), state)
        else:
            from transformers.integrations.executorch import TorchExportableModuleForDecoderOnlyLM
            w = TorchExportableModuleForDecoderOnlyLM(build(name)).model
            m = _StateAsIO(w)
            state = [t.clone() for layer in m.cache.layers
                     for t in (layer.keys, layer.values, layer.cumulative_length)]
            seq = torch.export.Dim("seq", min=1, max=MAX_CACHE - 1)
            with torch.no_grad():
                ep = torch.export.export(m, (torch.tensor([PROMPT]), torch.arange(len(PROMPT)), *state),
                                         dynamic_shapes=({1: seq}, {0: seq}, (None,) * len(state)),
                                         strict=False)
            _programs[key] = (ep, state)
    return _programs[key]


def state_as_io_steps(name, ir="training", prompt=PROMPT, new_tokens=NEW_TOKENS):
    """[Step] of state_as_io's program run as eager_steps runs the stateful
    one: each step's inputs hold the state the step before returned."""
    ep, state = state_as_io(name, ir)
    mod = copy.deepcopy(ep).module()
    steps, toks, pos, x = [], [], 0, torch.tensor([prompt])
    while len(toks) < new_tokens:
        flat = _call(mod, ep, "model", [x, torch.arange(pos, pos + x.shape[1])] + list(state), steps)
        state = flat[1:]
        pos += x.shape[1]
        toks.append(steps[-1].token)
        x = torch.tensor([[toks[-1]]])
    return steps


# ---- references -----------------------------------------------------------------

def _user_input_names(ep):
    return list(ep.graph_signature.user_inputs)


def _call(mod, ep, part, args, steps, token_of_last=True, **extra):
    """Run one step of mod (ep.module()) on args (in ep's user-input order)
    and the keyword arguments extra that hold no tensor; record it and return
    its outputs, flattened."""
    with torch.no_grad():
        # transformers' wrappers were exported with keyword inputs (their
        # names are the user inputs'), the other programs positionally
        spec = ep.call_spec.in_spec
        if extra:
            out = mod(**dict(zip(_user_input_names(ep), args)), **extra)
        else:  # the inputs in the program's structure (a DynamicCache is a pytree)
            a, kw = torch.utils._pytree.tree_unflatten(list(args), spec)
            out = mod(*a, **kw)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    flat = [o for o in torch.utils._pytree.tree_leaves(outs)]
    logits = flat[0]
    token = int(logits[0, -1].argmax()) if token_of_last else None
    steps.append(Step(part, _user_input_names(ep), [a.numpy().copy() for a in args],
                      logits.numpy().copy(), token, [o.numpy().copy() for o in flat]))
    return flat


def eager_steps(name, ir="training", prompt=PROMPT, new_tokens=NEW_TOKENS):
    """[Step]: the exported programs of a ZOO entry run with ep.module()
    (fresh modules: the state starts as exported), the prompt prefilled in one
    call where the program takes a run-time sequence length, then greedy
    decoding, one token a call, until new_tokens tokens are chosen."""
    parts = programs(name, ir)
    # ep.module() shares its buffers with ep: running it would write the
    # cached program's state (and a later save or run_decompositions() would
    # start from the state the run left), so each run unlifts a copy
    mods = {p: copy.deepcopy(ep).module() for p, ep in parts.items()}
    steps, toks = [], []
    ids = torch.tensor([prompt])
    if name in DECODERS:
        mod, ep = mods["model"], parts["model"]
        pos = 0
        x = ids
        while len(toks) < new_tokens:
            _call(mod, ep, "model", [x, torch.arange(pos, pos + x.shape[1])], steps)
            pos += x.shape[1]
            toks.append(steps[-1].token)
            x = torch.tensor([[toks[-1]]])
    elif name in SEQ2SEQ:
        x = _whisper_features() if name == "whisper" else ids
        (hidden,) = _call(mods["encoder"], parts["encoder"], "encoder", [x], steps, token_of_last=False)
        tok = build_config(name)["decoder_start_token_id"]
        for i in range(new_tokens):
            _call(mods["decoder"], parts["decoder"], "decoder",
                  [torch.tensor([[tok]]), hidden, torch.tensor([i])], steps)
            tok = steps[-1].token
            toks.append(tok)
    elif name in CACHE_IO:
        # export_with_dynamic_cache's program still takes the empty cache
        # it was exported with (no tensor in it) and use_cache
        from transformers import DynamicCache
        flat = _call(mods["prefill"], parts["prefill"], "prefill", [ids, torch.ones_like(ids)], steps,
                     cache=DynamicCache(config=build(name).config), use_cache=True)
        toks.append(steps[-1].token)
        while len(toks) < new_tokens:
            flat = _call(mods["decode"], parts["decode"], "decode", [torch.tensor([[toks[-1]]])] + flat[1:],
                         steps)
            toks.append(steps[-1].token)
    else:
        mod, ep = mods["model"], parts["model"]
        x = ids
        if name == "gru":  # one token a call: the prompt too
            for i in range(len(prompt) - 1):
                _call(mod, ep, "model", [ids[:, i:i + 1]], steps, token_of_last=False)
            x = ids[:, -1:]
        while len(toks) < new_tokens:
            _call(mod, ep, "model", [x], steps)
            toks.append(steps[-1].token)
            x = torch.tensor([[toks[-1]]])
    return steps


def build_config(name):
    """The config keyword arguments of a ZOO entry (transformers models)."""
    base = CACHE_IO.get(name, name)
    return (DECODERS.get(base) or SEQ2SEQ[base])[1]


def hf_greedy(name, prompt=PROMPT, new_tokens=NEW_TOKENS):
    """(tokens, [logits of the last position, numpy]) of greedy decoding by the
    original model, run eagerly without any cache: every step recomputes the
    whole sequence, so neither the cache nor the exported wrappers are in it."""
    model = build(name)
    toks, logits = [], []
    with torch.no_grad():
        if name in SEQ2SEQ:
            kw = {"input_features": _whisper_features()} if name == "whisper" else {"input_ids": torch.tensor([prompt])}
            dec = [build_config(name)["decoder_start_token_id"]]
            for _ in range(new_tokens):
                out = model(**kw, decoder_input_ids=torch.tensor([dec]), use_cache=False).logits
                logits.append(out[0, -1].numpy())
                dec.append(int(out[0, -1].argmax()))
                toks.append(dec[-1])
        else:
            seq = list(prompt)
            for _ in range(new_tokens):
                x = torch.tensor([seq])
                if name in STREAMING:
                    out = build(name)(x)  # a fresh state for every recomputation
                else:
                    out = model(input_ids=x, use_cache=False).logits
                logits.append(out[0, -1].numpy())
                seq.append(int(out[0, -1].argmax()))
                toks.append(seq[-1])
    return toks, logits


def verify(name, ir="training", rtol=1e-4, atol=1e-5):
    """Check that eager_steps(name, ir) is a sound reference: its greedy tokens
    equal the original model's (hf_greedy) and each step's last-position
    logits agree with it. Returns the steps."""
    steps = eager_steps(name, ir)
    want, want_logits = hf_greedy(name)
    dec = [s for s in steps if s.token is not None]
    got = [s.token for s in dec]
    assert got == want, f"{name} [{ir}]: exported program's tokens {got}, the model's {want}"
    for i, (s, w) in enumerate(zip(dec, want_logits)):
        np.testing.assert_allclose(s.logits[0, -1], w, rtol=rtol, atol=atol,
                                   err_msg=f"{name} [{ir}] step {i} ({s.part})")
    return steps
