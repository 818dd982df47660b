"""funcgrad: automatic differentiation for NumPy code, with PyTorch's autograd semantics.

Example:
    >>> import funcgrad as fg
    >>> x = fg.tensor(2.0, requires_grad=True)
    >>> y = x ** 3
    >>> (g,) = fg.autograd.grad(y, x, create_graph=True)
    >>> g, fg.autograd.grad(g, x)[0]
    (tensor(12., grad_fn=<MulBackward0>), tensor(12.))
"""
from funcgrad import autograd, check, func, functional, linalg, optimize
from funcgrad import ops as _ops
from funcgrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.creation import *  # noqa: F403
from funcgrad.creation import __all__ as _creation_all
from funcgrad.tensor import Tensor, _install_methods

_install_methods()
from funcgrad import numpy  # noqa: E402  (its array-API hook goes on the finished Tensor)

# the table's linalg_* entries are public as funcgrad.linalg.<torch name>, not at the top level
_ops_all = [name for name in _ops.__all__ if not name.startswith("linalg_")]
globals().update({name: getattr(_ops, name) for name in _ops_all})

__all__ = ["Tensor", "autograd", "check", "func", "functional", "linalg", "numpy", "optimize",
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", *_creation_all, *_ops_all]
__version__ = "0.1.0"
