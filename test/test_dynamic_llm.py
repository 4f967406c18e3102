"""Run-time sequence lengths through a decoder's KV-cache writes: one library
serves the prefill (seq > 1) and the decode steps (seq 1).

The decoders of test/llm_zoo.py keep their cache as state (test_state_zoo.py
runs them so); state_as_io gives the same graph, ops for ops, with the
cache as inputs and outputs, so the lowerings are tested here without
state: the static cache's index_copy_ (default IR) and index_put
(Core ATen) at a run-time number of positions, with everything else of the
decoder (rotary embeddings, the causal and sliding masks over the whole
cache, GQA attention) at run-time dims too.

Each case compiles one library and runs it step by step on the eager
reference's inputs (llm_zoo.state_as_io_steps: prefill of 5 tokens, then
31 decode steps of 1), comparing the logits and the new cache each step.

index_copy and index_put take run-time sizes (ir/lower/index.c, and
ir/import.c's table of dynamic lowerings lists them), so no library here is
specialized.

The last test needs none of that: transformers' export_with_dynamic_cache
and a decode program that takes its DynamicCache as input and returns it
grown (cache length a run-time dim) compile and run today.
"""

from pathlib import Path

import pytest

from conftest import IRS, doccc_cmd, fmt_result, header_of, parse_header, require, run_lib

RTOL, ATOL = 1e-4, 1e-5

def _dynamic_compile(src, out):
    """Compile src for sequential with its dims at run time (no specialization note)."""
    r = doccc_cmd(src, "-t", "sequential", "-o", f"{out}/")
    assert r.returncode == 0, fmt_result(r)
    assert "specialized" not in r.stderr, r.stderr
    lib = Path(out) / f"lib{Path(src).stem}.so"
    assert any(k.endswith("_NUM_DIMS") for k in parse_header(header_of(lib))), "no run-time dims"
    return lib


@pytest.mark.parametrize("ir", IRS)
def test_cache_write_at_run_time_positions(tmp_path, ir):
    """cache.index_copy_(2, positions, new) with as many positions as the
    run-time length of new (a clone of the input cache is written, so the
    program is stateless): index_copy_ in the default IR, index_put in Core ATen."""
    torch = require("torch")
    np = require("numpy")

    class Write(torch.nn.Module):
        def forward(self, cache, new, pos):
            return cache.clone().index_copy_(2, pos, new) * 2

    seq = torch.export.Dim("seq", min=1, max=16)
    args = (torch.randn(1, 2, 16, 4), torch.randn(1, 2, 5, 4), torch.arange(3, 8))
    with torch.no_grad():
        ep = torch.export.export(Write(), args, dynamic_shapes=(None, {2: seq}, {0: seq}))
        if ir == "core":
            ep = ep.run_decompositions()
    src = tmp_path / f"write_{ir}.pt2"
    torch.export.save(ep, str(src))
    lib = _dynamic_compile(src, tmp_path / "o")
    for t, start in ((1, 0), (5, 3), (16, 0), (2, 14)):
        x = (torch.randn(1, 2, 16, 4), torch.randn(1, 2, t, 4), torch.arange(start, start + t))
        (got,) = run_lib(lib, [a.numpy() for a in x])
        np.testing.assert_allclose(got, Write()(*x).numpy(), rtol=RTOL, atol=ATOL, err_msg=f"seq {t}")


@pytest.mark.parametrize("ir", IRS)
@pytest.mark.parametrize("name", ["llama", "gemma2"])
def test_decoder_prefill_and_decode(tmp_path, name, ir):
    """A decoder of llm_zoo with its static cache as inputs and outputs: one
    library runs the prefill of 5 tokens and 31 decode steps of 1 token
    (Gemma 2: sliding-window and full layers), each output compared with
    the eager program's."""
    torch = require("torch")
    require("transformers")
    np = require("numpy")
    import llm_zoo
    ep, _ = llm_zoo.state_as_io(name, ir)
    src = tmp_path / f"{name}_{ir}.pt2"
    torch.export.save(ep, str(src))
    lib = _dynamic_compile(src, tmp_path / "o")
    for i, step in enumerate(llm_zoo.state_as_io_steps(name, ir)):
        got = run_lib(lib, step.inputs)
        assert len(got) == len(step.outputs)
        for k, (g, w) in enumerate(zip(got, step.outputs)):
            assert g.shape == w.shape, f"step {i} output {k}: shape {g.shape}, eager {w.shape}"
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"{name} [{ir}] step {i} output {k}")


def test_dynamic_cache_prefill_and_decode(tmp_path):
    """llm_zoo's llama_dyncache: transformers' export_with_dynamic_cache (the
    prefill: logits and a cache of 5 positions) and the same model with its
    DynamicCache as input and output (the decode: the cache grows by one
    position a call, a run-time dim of every cache input and output),
    each compiled once; the steps chain the caches as eager_steps does.
    Default IR only: torch cannot run_decompositions() these programs
    (llm_zoo.CORE_FAILS)."""
    torch = require("torch")
    require("transformers")
    np = require("numpy")
    import llm_zoo
    libs = {}
    for part, ep in llm_zoo.programs("llama_dyncache").items():
        src = tmp_path / f"dyncache_{part}.pt2"
        torch.export.save(ep, str(src))
        if part == "prefill":  # static shapes: the prompt's 5 tokens
            r = doccc_cmd(src, "-t", "sequential", "-o", f"{tmp_path}/{part}/")
            assert r.returncode == 0, fmt_result(r)
            libs[part] = tmp_path / part / f"lib{src.stem}.so"
        else:
            libs[part] = _dynamic_compile(src, tmp_path / part)
    for i, step in enumerate(llm_zoo.eager_steps("llama_dyncache")):
        got = run_lib(libs[step.part], step.inputs)
        assert len(got) == len(step.outputs)
        for k, (g, w) in enumerate(zip(got, step.outputs)):
            assert g.shape == w.shape, f"step {i} ({step.part}) output {k}: shape {g.shape}, eager {w.shape}"
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, err_msg=f"step {i} ({step.part}) output {k}")
