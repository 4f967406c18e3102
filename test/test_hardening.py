"""Hardening of the graph importer: programs that break doccc's limits or the
IR's assumptions are rejected at import with a located message and exit 1,
leaving nothing in the output folder (README "Limits").

Each test edits the model.json of a real .pt2 export (an MLP: nodes linear,
relu, linear_1 on input x [2, 8]) the way the fuzzer's findings did; the
minimized fuzzer inputs themselves are replayed by `make fuzz-replay`
(test/fuzz/regress/import, test/fuzz/regress/pipeline).
"""

import pytest

from conftest import doccc_cmd, fmt_result, require


@pytest.fixture(scope="module")
def mlp_pt2(tmp_path_factory):
    torch = require("torch")
    import export as ex

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(torch.relu(self.fc1(x)))

    path = tmp_path_factory.mktemp("hardening") / "mlp.pt2"
    ex.export(Mlp(), (torch.randn(2, 8),), path)
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


def test_input_too_large(mlp_pt2, tmp_path):
    model = edited(mlp_pt2, tmp_path, "huge_input", lambda g: sizes(g, "x", [1 << 40, 8]))
    check_rejected(model, tmp_path, "tensor_values['x']", "too large")


def test_element_count_overflows(mlp_pt2, tmp_path):
    """A product of sizes past int64 (the first fuzzing's signed overflow)."""
    model = edited(mlp_pt2, tmp_path, "overflow", lambda g: sizes(g, "x", [1 << 62, 1 << 62]))
    check_rejected(model, tmp_path, "tensor_values['x']", "too large")


def test_intermediate_too_large_names_its_node(mlp_pt2, tmp_path):
    model = edited(mlp_pt2, tmp_path, "huge_relu", lambda g: sizes(g, "relu", [1 << 20, 1 << 20]))
    check_rejected(model, tmp_path, "graph.nodes[1] (node 'relu')", "too large")


def test_rank_too_large(mlp_pt2, tmp_path):
    model = edited(mlp_pt2, tmp_path, "rank9", lambda g: sizes(g, "x", [1] * 7 + [2, 8]))
    check_rejected(model, tmp_path, "tensor_values['x']", "rank 9 is too large")


def test_negative_storage_offset(mlp_pt2, tmp_path):
    def edit(g):
        g["tensor_values"]["x"]["storage_offset"] = {"as_int": -4}

    model = edited(mlp_pt2, tmp_path, "negative_offset", edit)
    check_rejected(model, tmp_path, "tensor_values['x']", "malformed storage offset")


def test_matrix_product_shape_mismatch(mlp_pt2, tmp_path):
    """linear's recorded result [2, 17] disagrees with its operands [2, 8] x [8, 16]."""
    model = edited(mlp_pt2, tmp_path, "bad_linear", lambda g: sizes(g, "linear", [2, 17]))
    check_rejected(model, tmp_path, "graph.nodes[0] (node 'linear')", "matrix product")


def test_malformed_argument_is_reported(mlp_pt2, tmp_path):
    """An argument of the wrong JSON type used to fail the import silently."""
    def edit(g):
        relu = next(n for n in g["nodes"] if n["name"] == "relu")
        relu["inputs"][0]["arg"] = {"as_int": "four"}

    model = edited(mlp_pt2, tmp_path, "bad_arg", edit)
    check_rejected(model, tmp_path, "graph.nodes[1] (node 'relu')", "argument 'self'")


def test_elementwise_operand_must_broadcast(mlp_pt2, tmp_path):
    """relu recorded as [2, 17] over its [2, 16] input: the loop would read past it."""
    model = edited(mlp_pt2, tmp_path, "bad_relu", lambda g: sizes(g, "relu", [2, 17]))
    check_rejected(model, tmp_path, "graph.nodes[1] (node 'relu')", "does not broadcast")


def test_view_rank_mismatch(mlp_pt2, tmp_path):
    """A view whose recorded rank differs from what the op gives (an unset
    stride, read by the verifier, in the first fuzzing)."""
    def edit(g):
        g["nodes"].insert(1, {"target": "torch.ops.aten.t.default", "name": "t",
                              "inputs": [{"name": "self", "arg": {"as_tensor": {"name": "linear"}}, "kind": 1}],
                              "outputs": [{"as_tensor": {"name": "t"}}], "metadata": {}})
        g["tensor_values"]["t"] = dict(g["tensor_values"]["linear"])
        sizes(g, "t", [2, 4, 4])

    model = edited(mlp_pt2, tmp_path, "bad_view", edit)
    check_rejected(model, tmp_path, "graph.nodes[1] (node 't')", "rank 3")
