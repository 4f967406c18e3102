"""Model: one instance of a doccc library, loaded with ctypes.

A library (libNAME.so) is opened once per load() with ctypes.CDLL (dlopen
counts references, so two loads of one path share the code and its
globals but each gets its own instance from create()); its descriptor
`doccc_model` (backends/doccc_model.h, mirrored in _desc.py) gives the
inputs, outputs, states and run-time dims and every entry point. A Model
keeps its _Library, and so the CDLL, alive; a DeviceArray keeps the
library whose runtime allocated it.

A call checks each input against the descriptor (count, dtype, then
shape, or for a library with run-time dims the rank and then the
library's own infer_dims), hands the library pointers to the caller's
memory where it is C-contiguous (a copy otherwise), allocates the outputs
64-byte aligned as `doccc run` does, sets the dims when they changed, runs,
and copies an input the program writes in place (input_written) back into
the caller's array when it had to copy it. All of that, and every other
call on the instance, happens under the instance's lock: an instance is
one workspace and one set of dims, so calls from several threads run one
at a time (one instance per thread runs them in parallel; run releases
the GIL).
"""

import ctypes
import json
import os
import sys
import threading
from ctypes import POINTER, addressof, byref, c_int64, c_void_p, cast, create_string_buffer
from typing import NamedTuple, Optional, Tuple

import numpy as np

from . import _desc
from ._desc import BF16, DTYPES, STATUS

ALIGN = 64

# Statuses whose last_error() message is the library's account of this
# failure (as in cmd/run.c's status_text); others keep only strerror's text.
_DETAILED = {1, 2, 7, 8, 9, 10}


class Error(RuntimeError):
    """A doccc library returned a non-zero status.

    status: the DOCCC_ERR_* number; name: its enum name ("DOCCC_ERR_INDEX");
    message: the library's strerror text; detail: its last_error() message
    where it has one for this failure (else None)."""

    def __init__(self, what, status, message=None, detail=None):
        self.status = int(status)
        self.name = STATUS.get(self.status, f"status {self.status}")
        self.message = message or self.name
        self.detail = detail or None
        super().__init__(f"{what}: {self.name}: {self.detail or self.message}")


class ShapeError(Error, ValueError):
    """DOCCC_ERR_SHAPE from the library: the inputs do not fit its run-time
    dims (their ranges or the export's guards). Both a doccc.Error and a
    ValueError, like the shape errors this package finds itself."""


class TensorInfo(NamedTuple):
    """An input or output: its torch name, doccc dtype name ("float32",
    "bfloat16", ...) and shape, None where a size is a run-time dim."""
    name: str
    dtype: str
    shape: Tuple[Optional[int], ...]


class StateInfo(NamedTuple):
    """A state (a buffer the model updates across runs); in_place: a run
    writes only what changes."""
    name: str
    dtype: str
    shape: Tuple[int, ...]
    in_place: bool


class Dim(NamedTuple):
    """A run-time dim: the export's symbol and its range (max None: no bound)."""
    name: str
    min: int
    max: Optional[int]


def _torch():
    """torch if the caller has imported it (a tensor cannot exist otherwise)."""
    return sys.modules.get("torch")


def _is_tensor(x):
    t = _torch()
    return t is not None and isinstance(x, t.Tensor)


def _torch_dtype(torch, code):
    return {0: torch.float32, 1: torch.float64, 2: torch.float16, 3: torch.bfloat16, 4: torch.int64,
            5: torch.int32, 6: torch.int16, 7: torch.int8, 8: torch.uint8, 9: torch.bool}[code]


def _aligned_empty(shape, dtype):
    """An uninitialised C-contiguous array whose data is 64-byte aligned (never
    a NULL pointer, even when empty)."""
    dtype = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = np.empty(n + ALIGN, np.uint8)
    off = (-raw.ctypes.data) % ALIGN
    return raw[off:off + n].view(dtype).reshape(shape)


def _shape_text(shape):
    return "(" + ", ".join("?" if s is None else str(s) for s in shape) + (",)" if len(shape) == 1 else ")")


class _Library:
    """One dlopen'd library and its descriptor."""

    def __init__(self, path):
        self.path = os.fspath(path)
        # ctypes.CDLL searches the library path for a bare name: make it a path.
        where = self.path if os.sep in self.path else os.path.join(os.curdir, self.path)
        self.cdll = ctypes.CDLL(where, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        self.desc = _desc.read_desc(self.cdll)
        self.abi = self.desc.abi_version
        d = self.desc
        if (d.ninputs < 0 or d.noutputs < 0 or not d.create or not d.run or not d.destroy
                or (self.resident and not (d.run_host and d.device_alloc and d.device_free and d.device_copy))):
            raise ValueError(f"{self.path}: damaged doccc descriptor")

    @property
    def resident(self):
        return self.abi >= 2 and bool(self.desc.device_resident)

    @property
    def ndims(self):
        return self.desc.ndims if self.abi >= 4 else 0

    @property
    def nstates(self):
        return self.desc.nstates if self.abi >= 5 else 0

    def strerror(self, status):
        s = self.desc.strerror(status) if self.desc.strerror else None
        return _desc.text(s)

    def last_error(self, model):
        if self.abi < 2 or not self.desc.last_error:
            return None
        return _desc.text(self.desc.last_error(model))

    def error(self, what, status, model=None, fresh=False):
        """An Error for status; fresh: the library's last_error() is about
        this call whatever the status (a state entry's DOCCC_ERR_ARG)."""
        detail = self.last_error(model) if (fresh or status in _DETAILED) else None
        cls = ShapeError if status == _desc.ERR_SHAPE else Error
        return cls(f"{os.path.basename(self.path)}: {what}", status, self.strerror(status), detail)


class DeviceArray:
    """Memory on the GPU of a device-resident (cuda, rocm) library, allocated
    through the library's own runtime (device_alloc), so that a caller
    without CUDA or HIP of its own can run the library on device pointers.
    Made by Model.to_device() or returned by a run on DeviceArrays; .numpy()
    copies it back; freed by free() or when collected."""

    def __init__(self, lib, shape, code):
        self._lib, self.shape, self._code = lib, tuple(int(s) for s in shape), code
        self.dtype = np.dtype(DTYPES[code][1])
        self.nbytes = int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize
        p = c_void_p()
        st = lib.desc.device_alloc(byref(p), max(self.nbytes, 1))
        if st:
            raise lib.error(f"cannot allocate {self.nbytes} bytes of device memory", st)
        self.ptr = p.value

    def data_ptr(self):
        return self.ptr

    def copy_from(self, a):
        """Copy the host array a (of this shape and dtype) in."""
        a = np.asarray(a)
        if a.shape != self.shape or a.dtype != self.dtype:
            raise ValueError(f"copy_from: {a.dtype}{_shape_text(a.shape)} into a device array of "
                             f"{self.dtype}{_shape_text(self.shape)}")
        a = np.ascontiguousarray(a) if a.ndim else a
        if self.nbytes and (st := self._lib.desc.device_copy(self.ptr, a.ctypes.data, self.nbytes,
                                                             _desc.COPY_TO_DEVICE)):
            raise self._lib.error("device_copy to the device failed", st)

    def numpy(self):
        """A host copy (bfloat16 as its uint16 bits)."""
        h = _aligned_empty(self.shape, self.dtype)
        if self.nbytes and (st := self._lib.desc.device_copy(h.ctypes.data, self.ptr, self.nbytes,
                                                             _desc.COPY_TO_HOST)):
            raise self._lib.error("device_copy to the host failed", st)
        return h

    def free(self):
        if self.ptr:
            p, self.ptr = self.ptr, None
            self._lib.desc.device_free(p)

    def __del__(self):
        try:
            self.free()
        except Exception:  # interpreter shutdown: nothing left to free with
            pass

    def __repr__(self):
        return f"DeviceArray({DTYPES[self._code][0]}{_shape_text(self.shape)}, ptr=0x{self.ptr or 0:x})"


class Model:
    """One instance of a doccc library: doccc.load(path, weights=None, threads=None).

    m(*inputs) or m.run(*inputs, out=None) runs it: one output comes back as
    the array, several as a tuple. Inputs are numpy arrays or torch CPU
    tensors (bfloat16: a torch bf16 tensor, or numpy uint16 holding the raw
    bits), of the descriptor's dtype exactly and its shape; the outputs are
    torch tensors when any input was one (sharing the numpy buffer), else
    numpy arrays. A device-resident library also takes CUDA/HIP torch
    tensors or DeviceArrays (device pointers, outputs left on the device);
    host inputs go through its run_host, which copies.

    Threads: an instance is one workspace and one set of dims. Its methods
    take the instance's lock, so calls from several threads are safe but
    run one at a time; for parallel runs, load one instance per thread
    (doccc.load twice on one path gives two independent instances).
    """

    def __init__(self, path, weights=None, threads=None):
        self._model = None
        self._lock = threading.Lock()
        self._lib = lib = _Library(path)
        d = lib.desc
        self._ins = [d.inputs[i] for i in range(d.ninputs)]
        self._outs = [d.outputs[i] for i in range(d.noutputs)]
        for k, t in enumerate(self._ins + self._outs):
            if t.dtype not in DTYPES or t.rank < 0 or (t.numel < 0 and not lib.ndims):
                raise ValueError(f"{lib.path}: damaged doccc descriptor "
                                 f"({'input' if k < len(self._ins) else 'output'} {k % max(len(self._ins), 1)})")
        self._written = [bool(lib.abi >= 5 and d.input_written and d.input_written[i])
                         for i in range(d.ninputs)]
        self._dims = None  # the dims set last
        wpath = self._weights_path(weights)
        m = c_void_p()
        st = d.create(byref(m), os.fsencode(wpath) if wpath is not None else None)
        if st:
            raise lib.error("create failed" + (f" (weights {wpath})" if wpath else ""), st)
        self._model = m
        if threads is not None:
            self.set_num_threads(threads)

    # ---- metadata ----

    @property
    def name(self):
        return _desc.text(self._lib.desc.name)

    @property
    def target(self):
        return _desc.text(self._lib.desc.target)

    @property
    def abi_version(self):
        return self._lib.abi

    @property
    def path(self):
        return self._lib.path

    @property
    def device_resident(self):
        return self._lib.resident

    @property
    def device_backend(self):
        return _desc.text(self._lib.desc.device_backend) if self._lib.abi >= 2 else None

    @property
    def info(self):
        """The library's description (desc.info, abi 3) as a dict, else None."""
        if self._lib.abi < 3 or not self._lib.desc.info:
            return None
        return json.loads(self._lib.desc.info.decode())

    @property
    def nodes(self):
        """The fused nodes of a library built with --profile or --values (abi 6),
        in run order, as (name, flops) pairs: name the torch nodes it covers
        joined by '+', flops a contraction's work per run (0 for others);
        [] for a library built without them."""
        d = self._lib.desc
        if self._lib.abi < 6 or d.nnodes <= 0 or not d.nodes:
            return []
        return [(_desc.text(d.nodes[i].name), d.nodes[i].flops) for i in range(d.nnodes)]

    @property
    def inputs(self):
        return [TensorInfo(_desc.text(t.name), DTYPES[t.dtype][0], _desc.tensor_shape(t)) for t in self._ins]

    @property
    def outputs(self):
        return [TensorInfo(_desc.text(t.name), DTYPES[t.dtype][0], _desc.tensor_shape(t)) for t in self._outs]

    @property
    def dims(self):
        d = self._lib.desc
        return [Dim(_desc.text(d.dims[k].name), int(d.dims[k].min), None if d.dims[k].max < 0 else int(d.dims[k].max))
                for k in range(self._lib.ndims)]

    @property
    def states(self):
        d = self._lib.desc
        return [StateInfo(_desc.text(t.name), DTYPES[t.dtype][0], _desc.tensor_shape(t),
                          bool(d.state_inplace and d.state_inplace[i]))
                for i, t in enumerate(d.states[i] for i in range(self._lib.nstates))]

    def __repr__(self):
        ins = ", ".join(f"{t.name}: {t.dtype}{_shape_text(t.shape)}" for t in self.inputs)
        return f"<doccc.Model {self.name} ({self.target}) [{ins}] from {self.path}>"

    # ---- life ----

    def _weights_path(self, weights):
        d = self._lib.desc
        if weights is not None:
            return os.fspath(weights)
        if d.weights_embedded:
            return None
        p = os.path.join(os.path.dirname(self._lib.path), f"{self.name or 'model'}.weights")
        if not os.path.exists(p):
            raise FileNotFoundError(f"{self._lib.path}: the weights are not embedded in this library and "
                                    f"{p} does not exist; pass weights=FILE")
        return p

    def close(self):
        """Destroy the instance (idempotent). The library stays loaded while a
        DeviceArray or another instance uses it."""
        with self._lock:
            m, self._model = self._model, None
            if m:
                self._lib.desc.destroy(m)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if getattr(self, "_model", None):
                self._lib.desc.destroy(self._model)
                self._model = None
        except Exception:  # interpreter shutdown
            pass

    def _handle(self):
        if not self._model:
            raise ValueError(f"{self._lib.path}: the model is closed")
        return self._model

    def set_num_threads(self, n):
        """The number of threads of the instance's runs (openmp builds; others
        take 1 only: DOCCC_ERR_THREADS)."""
        if not self._lib.desc.set_num_threads:
            raise Error(f"{os.path.basename(self._lib.path)}: cannot set the number of threads", _desc.ERR_ARG)
        with self._lock:
            st = self._lib.desc.set_num_threads(self._handle(), int(n))
            if st:
                raise self._lib.error(f"cannot use {n} threads", st, self._model)

    # ---- inputs ----

    def _in_label(self, i):
        return f"input {i} ('{_desc.text(self._ins[i].name)}')"

    def _bad_dtype(self, i, got, code):
        """Raise the TypeError of input i given dtype got where the model takes code."""
        want = DTYPES[code][0]
        raise TypeError(f"{self.name}: {self._in_label(i)} has dtype {got} but the model expects {want}"
                        + (" (a torch bfloat16 tensor or a numpy uint16 array of its bits)" if code == BF16 else ""))

    def _host_input(self, i, x):
        """(array, writeback) for input i: a C-contiguous numpy array of the
        descriptor's dtype on the caller's memory where it can be, and a
        function that copies the array back into x (None when x is the
        array's memory, or the input is not written)."""
        t = self._ins[i]
        code, want = t.dtype, np.dtype(DTYPES[t.dtype][1])
        written = self._written[i]
        if _is_tensor(x):
            torch = _torch()
            if x.device.type != "cpu":
                raise TypeError(f"{self.name}: {self._in_label(i)} is on {x.device}, but this library runs on "
                                f"the host (target {self.target}): pass a CPU tensor")
            if x.dtype != _torch_dtype(torch, code):
                self._bad_dtype(i, str(x.dtype).replace("torch.", ""), code)
            tc = x.detach().contiguous()
            a = (tc.view(torch.int16).numpy().view(np.uint16) if code == BF16 else tc.numpy())
            wb = None
            if written and tc.data_ptr() != x.data_ptr():
                def wb(x=x, a=a, torch=torch):
                    with torch.no_grad():
                        src = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if code == BF16 \
                            else torch.from_numpy(a)
                        x.copy_(src)
            return a, wb
        if isinstance(x, DeviceArray):
            raise TypeError(f"{self.name}: {self._in_label(i)} is a DeviceArray, but this library runs "
                            f"on the host (target {self.target})")
        if isinstance(x, (np.ndarray, np.generic)):
            a = np.asarray(x)
            if a.dtype != want:
                self._bad_dtype(i, a.dtype, code)
        else:  # a Python scalar or (nested) list
            a = np.asarray(x)
            if code == BF16 or not np.can_cast(a.dtype, want, "same_kind"):
                self._bad_dtype(i, f"{a.dtype} (from {type(x).__name__})", code)
            a = a.astype(want)
            written = False  # nothing of the caller's to write into
        if written and not a.flags.writeable:
            raise ValueError(f"{self.name}: {self._in_label(i)} is written in place by the model "
                             f"(as in eager), but the array is read-only")
        if not (a.flags.c_contiguous and a.flags.aligned):
            c = np.array(a, order="C", copy=True)
            if written:
                def wb(x=a, c=c):
                    x[...] = c
                return c, wb
            return c, None
        return a, None

    def _device_input(self, i, x):
        """(pointer, keep, writeback) for input i on the device: a DeviceArray
        or a GPU torch tensor (made contiguous on the device if it is not)."""
        t = self._ins[i]
        code = t.dtype
        if isinstance(x, DeviceArray):
            if x._code != code:
                self._bad_dtype(i, DTYPES[x._code][0], code)
            if not x.ptr:
                raise ValueError(f"{self.name}: {self._in_label(i)} is a freed DeviceArray")
            return x.ptr, x, None
        torch = _torch()
        if x.dtype != _torch_dtype(torch, code):
            self._bad_dtype(i, str(x.dtype).replace("torch.", ""), code)
        tc = x.detach().contiguous()
        wb = None
        if self._written[i] and tc.data_ptr() != x.data_ptr():
            def wb(x=x, tc=tc):
                with torch.no_grad():
                    x.copy_(tc)
        return tc.data_ptr(), tc, wb

    def _bind_dims(self, shapes):
        """The dims of inputs of these shapes (a library with run-time dims),
        after checking their ranks; ShapeError from the library's
        infer_dims when they do not fit."""
        lib = self._lib
        for i, (s, t) in enumerate(zip(shapes, self._ins)):
            if len(s) != t.rank:
                raise ValueError(f"{self.name}: {self._in_label(i)} has shape {_shape_text(s)} (rank {len(s)}) "
                                 f"but the model expects rank {t.rank}: {_shape_text(_desc.tensor_shape(t))}")
        bufs = [(c_int64 * max(len(s), 1))(*s) for s in shapes]
        arr = (POINTER(c_int64) * max(len(bufs), 1))(*[cast(b, POINTER(c_int64)) for b in bufs])
        dims = (c_int64 * lib.ndims)()
        msg = create_string_buffer(512)
        st = lib.desc.infer_dims(arr, dims, msg, len(msg))
        if st:
            raise ShapeError(f"{os.path.basename(lib.path)}: the inputs do not fit the library's run-time dims",
                             st, lib.strerror(st), msg.value.decode("utf-8", "replace"))
        return tuple(dims)

    def _output_shapes(self, dims):
        if dims is None:
            return [_desc.tensor_shape(t) for t in self._outs]
        lib, shapes = self._lib, []
        dd = (c_int64 * len(dims))(*dims)
        for k, t in enumerate(self._outs):
            sh = (c_int64 * max(t.rank, 1))()
            st = lib.desc.output_shape(dd, k, sh)
            if st:
                raise lib.error(f"output_shape of output {k}", st)
            shapes.append(tuple(sh[r] for r in range(t.rank)))
        return shapes

    def _check_shapes(self, shapes):
        """Fixed sizes: every input's shape is the descriptor's."""
        for i, (s, t) in enumerate(zip(shapes, self._ins)):
            want = _desc.tensor_shape(t)
            if tuple(s) != want:
                raise ValueError(f"{self.name}: {self._in_label(i)} has shape {_shape_text(s)} "
                                 f"but the model expects {_shape_text(want)}")

    # ---- running ----

    def __call__(self, *inputs, out=None):
        return self.run(*inputs, out=out)

    def run(self, *inputs, out=None):
        """Run the model once on inputs (in graph order); see the class."""
        n = len(self._ins)
        if len(inputs) != n:
            names = ", ".join(_desc.text(t.name) for t in self._ins)
            raise TypeError(f"{self.name} takes {n} input{'' if n == 1 else 's'}"
                            f"{f' ({names})' if n else ''}, got {len(inputs)}")
        torch = _torch()
        ondev = [isinstance(x, DeviceArray) or (_is_tensor(x) and x.device.type != "cpu") for x in inputs]
        if any(ondev):
            if not self._lib.resident:
                k = ondev.index(True)
                raise TypeError(f"{self.name}: {self._in_label(k)} is device memory, but this library runs on "
                                f"the host (target {self.target})")
            if not all(ondev):
                k = ondev.index(False)
                raise TypeError(f"{self.name}: {self._in_label(k)} is host memory but other inputs are on the "
                                f"device: pass all inputs on the device, or all on the host")
            return self._run_device(inputs, out)
        as_torch = any(_is_tensor(x) for x in inputs)
        prepared = [self._host_input(i, x) for i, x in enumerate(inputs)]
        arrays = [a for a, _ in prepared]
        shapes = [a.shape for a in arrays]
        dims = self._bind_dims(shapes) if self._lib.ndims else None
        if dims is None:
            self._check_shapes(shapes)
        oshapes = self._output_shapes(dims)
        outs = self._host_outputs(oshapes, out)
        ptrs_in = [a.ctypes.data or _NONNULL.ctypes.data for a in arrays]
        ptrs_out = [o.ctypes.data for o in outs]
        run = self._lib.desc.run_host if self._lib.resident else self._lib.desc.run
        self._locked_run(run, dims, ptrs_in, ptrs_out)
        for _, wb in prepared:
            if wb:
                wb()
        if out is not None:
            return out
        if as_torch:
            outs = [torch.from_numpy(o.view(np.int16)).view(torch.bfloat16) if t.dtype == BF16
                    else torch.from_numpy(o) for o, t in zip(outs, self._outs)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _host_outputs(self, shapes, out):
        """64-byte aligned arrays for the outputs, or the caller's out=
        (numpy arrays or CPU tensors), checked."""
        if out is None:
            return [_aligned_empty(s, DTYPES[t.dtype][1]) for s, t in zip(shapes, self._outs)]
        outs = [out] if len(self._outs) == 1 and not isinstance(out, (list, tuple)) else list(out)
        if len(outs) != len(self._outs):
            raise TypeError(f"{self.name} has {len(self._outs)} outputs, out= gives {len(outs)}")
        got = []
        for k, (o, s, t) in enumerate(zip(outs, shapes, self._outs)):
            label = f"out[{k}] (output '{_desc.text(t.name)}')"
            if _is_tensor(o):
                torch = _torch()
                if o.device.type != "cpu" or o.dtype != _torch_dtype(torch, t.dtype) or not o.is_contiguous():
                    raise TypeError(f"{self.name}: {label} must be a contiguous CPU tensor of "
                                    f"{DTYPES[t.dtype][0]}, not {o.dtype} on {o.device}")
                a = o.detach().view(torch.int16).numpy().view(np.uint16) if t.dtype == BF16 else o.detach().numpy()
            else:
                a = o
                if not isinstance(a, np.ndarray) or a.dtype != np.dtype(DTYPES[t.dtype][1]):
                    raise TypeError(f"{self.name}: {label} must be a numpy array of {DTYPES[t.dtype][1].__name__}")
                if not (a.flags.c_contiguous and a.flags.writeable and a.flags.aligned):
                    raise ValueError(f"{self.name}: {label} must be C-contiguous and writeable")
            if tuple(a.shape) != tuple(s):
                raise ValueError(f"{self.name}: {label} has shape {_shape_text(a.shape)}, "
                                 f"the output's is {_shape_text(s)}")
            got.append(a if a.size else _aligned_empty(s, a.dtype))
        return got

    def _locked_run(self, run, dims, ptrs_in, ptrs_out, stream=None):
        """set_dims when they changed, then run, under the lock; raises Error."""
        lib = self._lib
        pin = (c_void_p * max(len(ptrs_in), 1))(*ptrs_in)
        pout = (c_void_p * max(len(ptrs_out), 1))(*ptrs_out)
        with self._lock:
            m = self._handle()
            if dims is not None and dims != self._dims:
                st = lib.desc.set_dims(m, (c_int64 * len(dims))(*dims))
                if st:
                    self._dims = None
                    raise lib.error("cannot run at dims " + ", ".join(
                        f"{dm.name}={v}" for dm, v in zip(self.dims, dims)), st, m)
                self._dims = dims
            if stream is not None:
                st = lib.desc.set_stream(m, c_void_p(stream or None))
                if st:
                    raise lib.error("set_stream failed", st, m)
            st = run(m, pin, pout)
            if not st and stream:
                st = lib.desc.sync(m)  # the run's status, once it has finished
            if st:
                raise lib.error("run failed", st, m)

    # ---- device-resident libraries ----

    def to_device(self, a):
        """A DeviceArray holding a copy of the host array a (numpy, or a CPU
        tensor), through the library's runtime (device-resident libraries)."""
        if not self._lib.resident:
            raise TypeError(f"{self.name}: a host library (target {self.target}) has no device memory")
        if _is_tensor(a):
            torch = _torch()
            a = a.detach().contiguous()
            code = next((k for k in DTYPES if _torch_dtype(torch, k) == a.dtype), None)
            if code is None:
                raise TypeError(f"to_device: dtype {a.dtype} is not one of doccc's")
            a = a.view(torch.int16).numpy().view(np.uint16) if code == BF16 else a.numpy()
        else:
            a = np.asarray(a)
            code = next((k for k in DTYPES if k != BF16 and np.dtype(DTYPES[k][1]) == a.dtype), None)
            if code is None:
                raise TypeError(f"to_device: dtype {a.dtype} is not one of doccc's")
        dev = DeviceArray(self._lib, a.shape, code)
        dev.copy_from(a)
        return dev

    def device_empty(self, shape, dtype):
        """An uninitialised DeviceArray of a doccc dtype name ("float32", ...)."""
        code = next((k for k, (nm, _) in DTYPES.items() if nm == dtype), None)
        if code is None:
            raise TypeError(f"device_empty: unknown dtype {dtype!r}")
        return DeviceArray(self._lib, shape, code)

    def _run_device(self, inputs, out):
        prepared = [self._device_input(i, x) for i, x in enumerate(inputs)]
        shapes = [tuple(x.shape) for x in inputs]
        dims = self._bind_dims(shapes) if self._lib.ndims else None
        if dims is None:
            self._check_shapes(shapes)
        oshapes = self._output_shapes(dims)
        torch_in = [x for x in inputs if _is_tensor(x)]
        if out is not None:
            outs = [out] if len(self._outs) == 1 and not isinstance(out, (list, tuple)) else list(out)
            if len(outs) != len(self._outs):
                raise TypeError(f"{self.name} has {len(self._outs)} outputs, out= gives {len(outs)}")
            for k, (o, s, t) in enumerate(zip(outs, oshapes, self._outs)):
                if tuple(o.shape) != tuple(s):
                    raise ValueError(f"{self.name}: out[{k}] has shape {_shape_text(tuple(o.shape))}, "
                                     f"the output's is {_shape_text(s)}")
        elif torch_in:
            torch = _torch()
            dev = torch_in[0].device
            outs = [torch.empty(s, dtype=_torch_dtype(torch, t.dtype), device=dev) for s, t in zip(oshapes, self._outs)]
        else:
            outs = [DeviceArray(self._lib, s, t.dtype) for s, t in zip(oshapes, self._outs)]
        stream = None
        if torch_in and self._lib.desc.set_stream:
            # run on torch's current stream, after what produced the inputs, then sync
            stream = _torch().cuda.current_stream(torch_in[0].device).cuda_stream or 0
        elif self._lib.desc.set_stream:
            stream = 0  # the instance's own stream, synchronous
        self._locked_run(self._lib.desc.run, dims, [p for p, _, _ in prepared],
                         [o.data_ptr() if _is_tensor(o) else o.ptr for o in outs], stream)
        for _, _, wb in prepared:
            if wb:
                wb()
        if out is not None:
            return out
        return outs[0] if len(outs) == 1 else tuple(outs)

    # ---- state ----

    def _state_index(self, s):
        names = [st.name for st in self.states]
        if isinstance(s, str):
            if s not in names:
                raise KeyError(f"{self.name}: no state {s!r} (states: {', '.join(names) or 'none'})")
            return names.index(s)
        i = int(s)
        if not 0 <= i < len(names):
            raise IndexError(f"{self.name}: no state {i} (the library has {len(names)})")
        return i

    def reset(self):
        """Every state back to its exported value (as after create)."""
        if not self._lib.nstates:
            return
        with self._lock:
            st = self._lib.desc.reset(self._handle())
            if st:
                raise self._lib.error("reset failed", st, self._model, fresh=True)

    def get_state(self, s):
        """A copy of state s (index or name) as a numpy array (bfloat16: its uint16 bits)."""
        i = self._state_index(s)
        t = self._lib.desc.states[i]
        a = _aligned_empty(_desc.tensor_shape(t), DTYPES[t.dtype][1])
        with self._lock:
            st = self._lib.desc.get_state(self._handle(), i, c_void_p(a.ctypes.data), a.nbytes)
            if st:
                raise self._lib.error(f"get_state {i}", st, self._model, fresh=True)
        return a

    def set_state(self, s, value):
        """Set state s (index or name) from a numpy array or CPU tensor of its dtype and shape."""
        i = self._state_index(s)
        t = self._lib.desc.states[i]
        label = f"state {i} ('{_desc.text(t.name)}')"
        want = np.dtype(DTYPES[t.dtype][1])
        if _is_tensor(value):
            torch = _torch()
            if value.device.type != "cpu" or value.dtype != _torch_dtype(torch, t.dtype):
                raise TypeError(f"{self.name}: {label} takes {DTYPES[t.dtype][0]} on the CPU, "
                                f"not {value.dtype} on {value.device}")
            v = value.detach().contiguous()
            a = v.view(torch.int16).numpy().view(np.uint16) if t.dtype == BF16 else v.numpy()
        else:
            a = np.asarray(value)
            if a.dtype != want:
                raise TypeError(f"{self.name}: {label} takes {DTYPES[t.dtype][0]}, not {a.dtype}")
        if a.shape != _desc.tensor_shape(t):
            raise ValueError(f"{self.name}: {label} has shape {_shape_text(_desc.tensor_shape(t))}, "
                             f"not {_shape_text(a.shape)}")
        if not (a.flags.c_contiguous and a.flags.aligned):
            a = a.copy(order="C")
        with self._lock:
            st = self._lib.desc.set_state(self._handle(), i, c_void_p(a.ctypes.data or _NONNULL.ctypes.data),
                                          a.nbytes)
            if st:
                raise self._lib.error(f"set_state {i}", st, self._model, fresh=True)

    def copy_state_from(self, other):
        """Copy every state of other, an instance of the same library, into this one."""
        if not isinstance(other, Model) or addressof(other._lib.desc) != addressof(self._lib.desc):
            raise ValueError(f"{self.name}: copy_state_from takes another instance of the same library "
                             f"(loaded from the same file)")
        if other is self or not self._lib.nstates:
            return
        first, second = sorted((self, other), key=id)  # one order: no deadlock with a copy the other way
        with first._lock, second._lock:
            st = self._lib.desc.copy_state(self._handle(), other._handle())
            if st:
                raise self._lib.error("copy_state failed", st, self._model, fresh=True)


_NONNULL = _aligned_empty((ALIGN,), np.uint8)  # the pointer of an empty input

for _cls in (Error, ShapeError, TensorInfo, StateInfo, Dim, DeviceArray, Model):
    _cls.__module__ = "doccc"  # as the package exports them


def load(path, weights=None, threads=None):
    """Load the doccc library at path (libNAME.so) and create an instance.

    weights: the weights file of a library built with --external-weights
    (default NAME.weights beside the library); threads: the number of
    threads (openmp builds). Each call creates a new, independent instance."""
    return Model(path, weights=weights, threads=threads)
