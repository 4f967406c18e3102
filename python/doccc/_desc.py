"""The ctypes mirror of backends/doccc_model.h: the descriptor every doccc
library exports as `doccc_model`, its tensor and dim entries, the element
types and the status codes.

The C struct only grows at its end and abi_version says which fields exist,
so the mirror is one field list cut at each version's end: DESC[v] is the
struct as a library of abi v defines it, and the loader maps exactly that
many bytes (a library of abi 2 has no abi 3 fields to read past). Field
order, and so every offset and padding, follows the header: keep the two
in step (test/test_python.py compares the names, and the offsets with a C
compiler's offsetof). The header's doccc_bool is not used in the struct:
every flag there is an int.
"""

from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_double, c_int, c_int64, c_size_t, c_void_p

import numpy as np

ABI_VERSION = 6  # DOCCC_ABI_VERSION: the newest this package reads

# Element types (DOCCC_F32 ...): doccc's name and numpy's dtype. bfloat16
# has no numpy dtype: it travels as its raw bits in uint16, as in `doccc run`.
DTYPES = {
    0: ("float32", np.float32), 1: ("float64", np.float64), 2: ("float16", np.float16),
    3: ("bfloat16", np.uint16), 4: ("int64", np.int64), 5: ("int32", np.int32),
    6: ("int16", np.int16), 7: ("int8", np.int8), 8: ("uint8", np.uint8), 9: ("bool", np.bool_),
}
BF16 = 3

# Status codes returned by create/run and the other entries (0 = success).
STATUS = {
    0: "DOCCC_OK", 1: "DOCCC_ERR_NOMEM", 2: "DOCCC_ERR_WEIGHTS", 3: "DOCCC_ERR_ARG",
    4: "DOCCC_ERR_THREADS", 5: "DOCCC_ERR_INDEX", 6: "DOCCC_ERR_ZERODIV", 7: "DOCCC_ERR_DEVICE",
    8: "DOCCC_ERR_ASSERT", 9: "DOCCC_ERR_SHAPE", 10: "DOCCC_ERR_CPU",
}
ERR_ARG, ERR_SHAPE = 3, 9

COPY_TO_DEVICE, COPY_TO_HOST = 1, 2
LOG_NOTE, LOG_WARNING = 0, 1


class TensorDesc(Structure):
    """doccc_tensor_desc: an input, output or state."""
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("rank", c_int),
                ("shape", POINTER(c_int64)), ("numel", c_int64), ("nbytes", c_size_t)]


class DimDesc(Structure):
    """doccc_dim_desc (abi 4): a run-time dim, its symbol and range (max -1: no bound)."""
    _fields_ = [("name", c_char_p), ("min", c_int64), ("max", c_int64)]


class ValueDesc(Structure):
    """doccc_value_desc (abi 6): a value a fused node leaves, at element strides."""
    _fields_ = [("name", c_char_p), ("dtype", c_int), ("rank", c_int),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64))]


class NodeDesc(Structure):
    """doccc_node_desc (abi 6): a fused node, its torch nodes, flops and values."""
    _fields_ = [("name", c_char_p), ("flops", c_double), ("nvalues", c_int), ("values", POINTER(ValueDesc))]


LOGFN = CFUNCTYPE(None, c_void_p, c_int, c_char_p)
NODEHOOK = CFUNCTYPE(None, c_void_p, c_int, c_int, POINTER(c_void_p))
RUNFN = CFUNCTYPE(c_int, c_void_p, POINTER(c_void_p), POINTER(c_void_p))

# The fields in the header's order, each list ending where that abi version's struct ends.
_FIELDS = {
    1: [
        ("abi_version", c_int), ("name", c_char_p), ("target", c_char_p), ("category", c_char_p),
        ("doccc_version", c_char_p), ("input_hash", c_char_p),
        ("ninputs", c_int), ("noutputs", c_int),
        ("inputs", POINTER(TensorDesc)), ("outputs", POINTER(TensorDesc)),
        ("workspace_size", c_size_t), ("weights_embedded", c_int),
        ("create", CFUNCTYPE(c_int, POINTER(c_void_p), c_char_p)),
        ("run", RUNFN),
        ("destroy", CFUNCTYPE(None, c_void_p)),
        ("strerror", CFUNCTYPE(c_char_p, c_int)),
        ("set_num_threads", CFUNCTYPE(c_int, c_void_p, c_int)),
    ],
    2: [
        ("device_resident", c_int), ("device_backend", c_char_p), ("simulated", c_int),
        ("run_host", RUNFN),
        ("set_stream", CFUNCTYPE(c_int, c_void_p, c_void_p)),
        ("sync", CFUNCTYPE(c_int, c_void_p)),
        ("last_error", CFUNCTYPE(c_char_p, c_void_p)),
        ("set_log", CFUNCTYPE(None, c_void_p, LOGFN, c_void_p)),
        ("device_alloc", CFUNCTYPE(c_int, POINTER(c_void_p), c_size_t)),
        ("device_free", CFUNCTYPE(c_int, c_void_p)),
        ("device_copy", CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_int)),
    ],
    3: [
        ("march", c_char_p), ("options", c_char_p), ("weights_size", c_size_t),
        ("weights_sha256", c_char_p), ("info", c_char_p),
    ],
    4: [
        ("ndims", c_int), ("dims", POINTER(DimDesc)),
        ("input_dims", POINTER(c_char_p)), ("output_dims", POINTER(c_char_p)),
        ("set_dims", CFUNCTYPE(c_int, c_void_p, POINTER(c_int64))),
        ("infer_dims", CFUNCTYPE(c_int, POINTER(POINTER(c_int64)), POINTER(c_int64), c_char_p, c_size_t)),
        ("output_shape", CFUNCTYPE(c_int, POINTER(c_int64), c_int, POINTER(c_int64))),
    ],
    5: [
        ("nstates", c_int), ("states", POINTER(TensorDesc)), ("state_inplace", POINTER(c_int)),
        ("reset", CFUNCTYPE(c_int, c_void_p)),
        ("get_state", CFUNCTYPE(c_int, c_void_p, c_int, c_void_p, c_size_t)),
        ("set_state", CFUNCTYPE(c_int, c_void_p, c_int, c_void_p, c_size_t)),
        ("copy_state", CFUNCTYPE(c_int, c_void_p, c_void_p)),
        ("input_written", POINTER(c_int)),
    ],
    6: [
        ("nnodes", c_int), ("nodes", POINTER(NodeDesc)),
        ("set_hook", CFUNCTYPE(c_int, c_void_p, NODEHOOK, c_void_p)),
    ],
}


def _desc_class(v):
    fields = [f for k in range(1, v + 1) for f in _FIELDS[k]]
    return type(f"ModelDescV{v}", (Structure,), {"_fields_": fields})


# DESC[v]: doccc_model_desc as a library of abi version v defines it.
DESC = {v: _desc_class(v) for v in _FIELDS}
ModelDesc = DESC[ABI_VERSION]


def read_desc(cdll):
    """The library's descriptor (the struct of its own abi version, mapped in
    place), or raises ValueError when it has none or one of another abi."""
    try:
        abi = c_int.in_dll(cdll, "doccc_model").value
    except ValueError:
        raise ValueError(f"{cdll._name}: not a doccc library (no 'doccc_model' symbol)") from None
    if abi not in DESC:
        raise ValueError(f"{cdll._name}: descriptor ABI version {abi} is not supported by this doccc "
                         f"package (it reads versions 1 to {ABI_VERSION}); rebuild the library or "
                         f"update the package")
    return DESC[abi].in_dll(cdll, "doccc_model")


def has(d, field):
    """Whether descriptor d (of its own abi version) has field."""
    return any(f == field for f, _ in type(d)._fields_)


def text(p):
    """A C string field as str (None stays None)."""
    return p.decode("utf-8", "replace") if p is not None else None


def tensor_shape(t):
    """A doccc_tensor_desc's shape, None where a size is a run-time dim (-1)."""
    return tuple(None if t.shape[r] < 0 else int(t.shape[r]) for r in range(t.rank))
