"""Hardening of the graph importer: programs that break doccc's limits or the
IR's assumptions are rejected at import with a located message and exit 1,
leaving nothing in the output folder (docs/large-models.md, "Limits").

Each test edits the model.json of a real .pt2 export (an MLP: nodes linear,
relu, linear_1 on input x [2, 8]; a convolution, batch norm, ReLU and max
pooling on x [1, 3, 8, 8]) the way the fuzzer's findings did; the
minimized fuzzer inputs themselves are replayed by `make fuzz-replay`
(test/fuzz/regress/import, test/fuzz/regress/pipeline).
"""

import sys
from pathlib import Path

import pytest

from conftest import doccc_cmd, fmt_result, require


@pytest.fixture(scope="module")
def mlp_pt2(tmp_path_factory):
    torch = require("torch")
    import export as ex
    sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
    from make_graph_seeds import Mlp  # the fuzz seeds' MLP

    path = tmp_path_factory.mktemp("hardening") / "mlp.pt2"
    ex.export(Mlp(), (torch.randn(2, 8),), path)
    return ex, path


@pytest.fixture(scope="module")
def conv_pt2(tmp_path_factory):
    torch = require("torch")
    import export as ex
    sys.path.insert(0, str(Path(__file__).resolve().parent / "fuzz"))
    from make_graph_seeds import ConvBn  # conv 3->4, 3x3, padding 1; max pool 2

    path = tmp_path_factory.mktemp("hardening") / "convbn.pt2"
    ex.export(ConvBn().eval(), (torch.randn(1, 3, 8, 8),), path)
    return ex, path


def edited(mlp_pt2, tmp_path, name, edit):
    ex, path = mlp_pt2

    def fn(d):
        edit(d["graph_module"]["graph"])
        return d

    return ex.rewrite_pt2(path, tmp_path / f"{name}.pt2", fn)


def sizes(graph, value, dims):
    graph["tensor_values"][value]["sizes"] = [{"as_int": d} for d in dims]
    graph["tensor_values"][value]["strides"] = [{"as_int": 1} for _ in dims]


def check_rejected(model, tmp_path, *needles):
    out = tmp_path / "out"
    out.mkdir()
    r = doccc_cmd(model, "-o", f"{out}/")
    assert r.returncode == 1, "expected exit 1\n" + fmt_result(r)
    for n in (model.name,) + needles:
        assert n in r.stderr, f"{n!r} missing from the message\n" + fmt_result(r)
    assert "internal" not in r.stderr and "Assertion" not in r.stderr, fmt_result(r)
    assert not list(out.iterdir()), f"output left behind: {list(out.iterdir())}"


def test_unchanged_copy_compiles(mlp_pt2, tmp_path):
    """Control: the rewrite itself keeps the model valid."""
    model = edited(mlp_pt2, tmp_path, "same", lambda g: None)
    r = doccc_cmd(model, "-o", f"{tmp_path}/")
    assert r.returncode == 0, fmt_result(r)


def set_offset(g):
    g["tensor_values"]["x"]["storage_offset"] = {"as_int": -4}


def bad_relu_arg(g):
    relu = next(n for n in g["nodes"] if n["name"] == "relu")
    relu["inputs"][0]["arg"] = {"as_int": "four"}


def view_of_other_rank(g):
    g["nodes"].insert(1, {"target": "torch.ops.aten.t.default", "name": "t",
                          "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "linear"}}, "kind": 1}],
                          "outputs": [{"as_tensor": {"name": "t"}}], "metadata": {}})
    g["tensor_values"]["t"] = dict(g["tensor_values"]["linear"])
    sizes(g, "t", [2, 4, 4])


# (name, edit of the graph, what the message must say). The classes the
# fuzzers found: sizes past the limits or past int64 (signed overflow), an
# intermediate value too large (named at its node), malformed metadata and
# arguments (they used to fail silently), results whose recorded shape the
# op cannot give (a GEMM, an elementwise loop and a view indexed past
# their operands or through unset strides).
CASES = [
    ("huge_input", lambda g: sizes(g, "x", [1 << 40, 8]), ["tensor_values['x']", "too large"]),
    ("overflow", lambda g: sizes(g, "x", [1 << 62, 1 << 62]), ["tensor_values['x']", "too large"]),
    ("huge_relu", lambda g: sizes(g, "relu", [1 << 20, 1 << 20]), ["graph.nodes[1] (node 'relu')", "too large"]),
    ("rank9", lambda g: sizes(g, "x", [1] * 7 + [2, 8]), ["tensor_values['x']", "rank 9 is too large"]),
    ("negative_offset", set_offset, ["tensor_values['x']", "malformed storage offset"]),
    ("bad_linear", lambda g: sizes(g, "linear", [2, 17]), ["graph.nodes[0] (node 'linear')", "matrix product"]),
    ("bad_arg", bad_relu_arg, ["graph.nodes[1] (node 'relu')", "argument 'self'"]),
    ("bad_relu", lambda g: sizes(g, "relu", [2, 17]), ["graph.nodes[1] (node 'relu')", "does not broadcast"]),
    ("bad_view", view_of_other_rank, ["graph.nodes[1] (node 't')", "rank 3"]),
]


@pytest.mark.parametrize("name,edit,needles", CASES, ids=[c[0] for c in CASES])
def test_rejected_at_import(mlp_pt2, tmp_path, name, edit, needles):
    check_rejected(edited(mlp_pt2, tmp_path, name, edit), tmp_path, *needles)


def set_arg(kind, arg, value):
    """An edit: argument `arg` of the first node whose target holds `kind`."""
    def edit(g):
        node = next(n for n in g["nodes"] if kind in n["target"])
        a = next((a for a in node["inputs"] if a["name"] == arg), None)
        if a is None:
            a = {"name": arg, "kind": 1}
            node["inputs"].append(a)
        a["arg"] = ({"as_bool": value} if isinstance(value, bool) else {"as_int": value} if isinstance(value, int)
                    else {"as_ints": value})
    return edit


def pool_window(kernel, stride, padding, ceil_mode):
    """An edit: the max pooling's window (on the 8x8 map, recorded 4x4 out)."""
    parts = [set_arg("max_pool", "kernel_size", kernel), set_arg("max_pool", "stride", stride),
             set_arg("max_pool", "padding", padding), set_arg("max_pool", "ceil_mode", ceil_mode)]

    def edit(g):
        for e in parts:
            e(g)
    return edit


def conv_out(dims):
    def edit(g):
        node = next(n for n in g["nodes"] if "conv" in n["target"])
        sizes(g, node["outputs"][0]["as_tensor"]["name"], dims)
    return edit


# A window or channel count the kernels cannot take: the fuzzer's groups of 0
# divided by zero in the convolution's expansion (regress/pipeline/
# conv-groups-zero); the rest of its family with it.
CONV_CASES = [
    ("groups_zero", set_arg("conv", "groups", 0), ["in 0 groups"]),
    ("groups_not_dividing", set_arg("conv", "groups", 3), ["3 input channels into 4 in 3 groups"]),
    ("stride_zero", set_arg("conv", "stride", [0, 0]), ["convolution with kernel 3, stride 0"]),
    ("dilation_negative", set_arg("conv", "dilation", [-2, 1]), ["dilation -2"]),
    ("padding_negative", set_arg("conv", "padding", [-1, -1]), ["padding -1"]),
    ("dilation_huge", set_arg("conv", "dilation", [1 << 62, 1]), ["too large"]),
    ("window_past_input", set_arg("conv", "dilation", [9, 1]), ["gives no output"]),
    ("output_size", conv_out([1, 4, 9, 8]), ["size 8 in dim 2", "gives 8, not the 9 recorded"]),
    ("output_channels", conv_out([1, 5, 8, 8]), ["weight of [4, 3, ...]"]),
    ("pool_stride_zero", set_arg("max_pool", "stride", [0, 0]), ["pooling with kernel 2, stride 0"]),
    ("pool_padding", set_arg("max_pool", "padding", [2, 2]), ["padding 2, more than half the window of 2"]),
    ("pool_kernel_empty", set_arg("max_pool", "kernel_size", []), ["empty kernel_size"]),
    # torch's output size in both ceil modes (pooling_output_shape): a window
    # wider than the input gives one output in ceil mode while it overhangs
    # by less than a stride, and a last window starting in the padding is
    # dropped (8 + 1 padded, stride 3: windows at 0, 3, 6, not 9)
    ("pool_window_past_input", pool_window([9, 9], [9, 9], [0, 0], False),
     ["size 8 in dim 2 with kernel 9", "gives no output (the window is wider than the padded input)"]),
    ("pool_ceil_wide", pool_window([12, 12], [12, 12], [0, 0], True),
     ["size 8 in dim 2 with kernel 12, stride 12", "gives 1, not the 4 recorded"]),
    ("pool_ceil_overhang", pool_window([12, 12], [2, 2], [0, 0], True),
     ["kernel 12, stride 2", "gives no output (the window overhangs the padded input by a stride or more)"]),
    ("pool_ceil_last_dropped", pool_window([3, 3], [3, 3], [1, 1], True),
     ["kernel 3, stride 3, padding 1", "gives 3, not the 4 recorded"]),
]


@pytest.mark.parametrize("name,edit,needles", CONV_CASES, ids=[c[0] for c in CONV_CASES])
def test_conv_rejected_at_import(conv_pt2, tmp_path, name, edit, needles):
    check_rejected(edited(conv_pt2, tmp_path, name, edit), tmp_path, *needles)


@pytest.fixture(scope="module")
def conv1d_transposed_pt2(tmp_path_factory):
    """A 1-d convolution (compiled as 2-d over a hidden height) into a transposed one."""
    torch = require("torch")
    import export as ex

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c = torch.nn.Conv1d(2, 3, 3)
            self.t = torch.nn.ConvTranspose2d(3, 2, 3, stride=2)

        def forward(self, x):
            return self.t(self.c(x).unsqueeze(2))

    path = tmp_path_factory.mktemp("hardening") / "conv1d_t.pt2"
    ex.export(M().eval(), (torch.randn(1, 2, 10),), path)
    return ex, path


def nth_conv_out(i, dims):
    def edit(g):
        node = [n for n in g["nodes"] if "conv" in n["target"]][i]
        sizes(g, node["outputs"][0]["as_tensor"]["name"], dims)
    return edit


# The 1-d convolution's dims as the model numbers them (10 -> 8 in dim 2, not
# the hidden height's dim 3); the transposed one's range of output paddings.
@pytest.mark.parametrize("name,edit,needles", [
    ("conv1d_output", nth_conv_out(0, [1, 3, 9]), ["size 10 in dim 2", "gives 8, not the 9 recorded"]),
    ("transposed_output", nth_conv_out(1, [1, 2, 3, 12]), ["size 8 in dim 3", "gives 17 to 18, not the 12 recorded"]),
], ids=["conv1d_output", "transposed_output"])
def test_conv1d_transposed_rejected(conv1d_transposed_pt2, tmp_path, name, edit, needles):
    check_rejected(edited(conv1d_transposed_pt2, tmp_path, name, edit), tmp_path, *needles)


def test_conv1d_transposed_unchanged_copy_compiles(conv1d_transposed_pt2, tmp_path):
    model = edited(conv1d_transposed_pt2, tmp_path, "same", lambda g: None)
    r = doccc_cmd(model, "-o", f"{tmp_path}/")
    assert r.returncode == 0, fmt_result(r)


def test_conv_unchanged_copy_compiles(conv_pt2, tmp_path):
    model = edited(conv_pt2, tmp_path, "same", lambda g: None)
    r = doccc_cmd(model, "-o", f"{tmp_path}/")
    assert r.returncode == 0, fmt_result(r)


def test_pool_ceil_control_compiles(conv_pt2, tmp_path):
    """Control for the ceil cases: kernel 3, stride 2 gives the recorded 4x4
    in ceil mode only ((8 - 3 + 1) / 2 + 1; 3 rounded down)."""
    model = edited(conv_pt2, tmp_path, "ceil", pool_window([3, 3], [2, 2], [0, 0], True))
    r = doccc_cmd(model, "-o", f"{tmp_path}/")
    assert r.returncode == 0, fmt_result(r)
    check_rejected(edited(conv_pt2, tmp_path, "floor", pool_window([3, 3], [2, 2], [0, 0], False)), tmp_path,
                   "gives 3, not the 4 recorded")


@pytest.fixture(scope="module")
def avg_pool3d_pt2(tmp_path_factory):
    """A 3-d average pooling, kernel 2, of x [1, 2, 4, 4, 4]."""
    torch = require("torch")
    import export as ex

    class M(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.avg_pool3d(x, 2)

    path = tmp_path_factory.mktemp("hardening") / "avg_pool3d.pt2"
    ex.export(M(), (torch.randn(1, 2, 4, 4, 4),), path)
    return ex, path


def test_avg_pool3d_smaller_than_kernel(avg_pool3d_pt2, tmp_path):
    """torch's avg_pool3d takes no input smaller than its kernel, whatever
    the padding and ceil mode (its 2-d and max pooling do): neither does
    doccc. Kernel 5, stride 5, padding 2 in ceil mode would give the
    recorded 1 by the output-size formula alone."""
    def edit(g):
        for e in (set_arg("avg_pool3d", "kernel_size", [5, 2, 2]), set_arg("avg_pool3d", "stride", [5, 2, 2]),
                  set_arg("avg_pool3d", "padding", [2, 0, 0]), set_arg("avg_pool3d", "ceil_mode", True)):
            e(g)
        node = next(n for n in g["nodes"] if "avg_pool3d" in n["target"])
        sizes(g, node["outputs"][0]["as_tensor"]["name"], [1, 2, 1, 2, 2])
    check_rejected(edited(avg_pool3d_pt2, tmp_path, "avg3d", edit), tmp_path,
                   "graph.nodes[0] (node 'avg_pool3d')", "3-d average pooling of size 4 in dim 2 with kernel 5")
    r = doccc_cmd(edited(avg_pool3d_pt2, tmp_path, "avg3d_same", lambda g: None), "-o", f"{tmp_path}/same/")
    assert r.returncode == 0, fmt_result(r)


@pytest.fixture(scope="module")
def split_pt2(tmp_path_factory):
    """Three outputs of one split (getitem, getitem_1, getitem_2), multiplied."""
    torch = require("torch")
    import export as ex

    class M(torch.nn.Module):
        def forward(self, x):
            a, b, c = x.split(4, dim=-1)
            return a * b + c

    path = tmp_path_factory.mktemp("hardening") / "split.pt2"
    ex.export(M(), (torch.randn(2, 12),), path)
    return ex, path


def test_split_output_without_metadata(split_pt2, tmp_path):
    """A split output whose tensor_values entry is missing was reported and
    then skipped as an unused output: doccc wrote a library and exited 0
    after the error (the long make fuzz, regress/pipeline/split-output-without-meta).
    Any error at import now fails it."""
    def drop(g):
        name = next(n for n in g["nodes"] if "split" in n["target"])["outputs"][0]["as_tensors"][1]["name"]
        del g["tensor_values"][name]
    model = edited(split_pt2, tmp_path, "split_meta", drop)
    check_rejected(model, tmp_path, "graph.tensor_values has no entry for 'getitem_1'")
    r = doccc_cmd(edited(split_pt2, tmp_path, "split_same", lambda g: None), "-o", f"{tmp_path}/same/")
    assert r.returncode == 0 and "error" not in r.stderr, fmt_result(r)


def _stateful(kind):
    """A model that mutates what it owns or is given: a cache and a counter
    (registered buffers written in forward: the library's state), a batch
    norm in training mode (its running statistics and batch counter: not
    inference), a parameter (not inference either), or its own input (the
    caller's buffer, written back)."""
    torch = require("torch")

    class Cache(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("cache", torch.zeros(2, 8))
            self.register_buffer("count", torch.zeros((), dtype=torch.int64))

        def forward(self, x):
            self.cache[:, :4] = x
            self.count += 1
            return self.cache * self.count

    class Input(torch.nn.Module):
        def forward(self, x):
            return x.add_(1) * 2

    class Param(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(4))

        def forward(self, x):
            with torch.no_grad():
                self.w.mul_(0.5)
            return x * self.w

    return {"cache": Cache, "batch_norm": lambda: torch.nn.BatchNorm1d(4), "input": Input, "param": Param}[kind]()


# What each mutation is, in the words of its message (output_specs[i] in
# order): batch norm is blamed only for its own buffers.
MUTATIONS = [
    ("batch_norm", ["output_specs[0]: the graph updates buffer 'running_mean' in forward (by "
                    "aten._native_batch_norm_legit_functional.default): the running statistics of a training-mode "
                    "batch norm, which doccc does not compute: doccc compiles inference only (call model.eval() before export)",
                    "output_specs[1]: the graph updates buffer 'running_var'",
                    "output_specs[2]: the graph updates buffer 'num_batches_tracked' in forward (by aten.add.Tensor): "
                    "the batch counter of a training-mode batch norm"]),
    ("param", ["the graph mutates parameter 'w' in forward (by aten.mul.Tensor): doccc compiles inference only, "
               "and keeps a model's state in buffers: register the state with register_buffer"]),
]


@pytest.mark.parametrize("kind,needles", MUTATIONS, ids=[c[0] for c in MUTATIONS])
def test_mutation_named(tmp_path, kind, needles):
    """A mutated buffer, parameter or input (the Core ATen graph states each
    in its signature) is refused naming what was mutated, by which op, and
    what to do; only a batch norm's own buffers blame training mode."""
    torch = require("torch")
    import export as ex
    model = tmp_path / f"{kind}.pt2"
    ex.export(_stateful(kind), (torch.randn(2, 4),), model, ir="core", train=kind == "batch_norm")
    check_rejected(model, tmp_path, *needles)
    if kind != "batch_norm":
        r = doccc_cmd(model, "-o", f"{tmp_path}/again/")
        assert "batch norm" not in r.stderr, fmt_result(r)


@pytest.mark.parametrize("kind", ["cache", "input"])
def test_state_compiles(tmp_path, kind):
    """What doccc once refused here compiles now: the buffers (a slice
    assignment into a cache, a counter) are the library's state, carried
    from one run to the next; the input written in place is written back.
    Three runs in one process, each against eager's."""
    torch = require("torch")
    np = require("numpy")
    import export as ex
    model = tmp_path / f"{kind}.pt2"
    ex.export(_stateful(kind), (torch.randn(2, 4),), model, ir="core")
    mod = torch.export.load(str(model)).module()
    args = []
    for s in range(3):
        x = torch.randn(2, 4)
        np.save(tmp_path / f"x{s}.npy", x.numpy())
        with torch.no_grad():
            np.save(tmp_path / f"y{s}.npy", mod(x.clone()).numpy())
        args += (["--step"] if s else []) + ["-i", tmp_path / f"x{s}.npy", "--expect", tmp_path / f"y{s}.npy"]
    r = doccc_cmd(model, "-o", f"{tmp_path}/out/")
    assert r.returncode == 0 and "error" not in r.stderr, fmt_result(r)
    r = doccc_cmd("run", tmp_path / "out" / f"lib{kind}.so", *args)
    assert r.returncode == 0 and "in 3 steps" in r.stdout, fmt_result(r)
