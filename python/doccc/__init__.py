"""doccc: load and run libraries compiled by doccc from Python.

    import doccc
    m = doccc.load("build/libresnet18.so")   # dlopen + the `doccc_model` descriptor
    y = m(x)                                  # numpy arrays or torch CPU tensors in, the same kind out

Pure Python (ctypes and numpy; torch only when the caller passes tensors).
The descriptor's contract is backends/doccc_model.h in the doccc
repository; python/README.md describes this package.
"""

from ._desc import ABI_VERSION, STATUS
from ._model import DeviceArray, Dim, Error, Model, ShapeError, StateInfo, TensorInfo, load

__version__ = "0.1.0"

__all__ = ["ABI_VERSION", "STATUS", "DeviceArray", "Dim", "Error", "Model", "ShapeError", "StateInfo",
           "TensorInfo", "load"]
