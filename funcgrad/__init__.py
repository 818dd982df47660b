"""funcgrad: automatic differentiation for NumPy code, with PyTorch's autograd semantics.

Example:
    >>> import funcgrad as fg
    >>> x = fg.tensor(2.0, requires_grad=True)
    >>> y = x ** 3
    >>> (g,) = fg.autograd.grad(y, x, create_graph=True)
    >>> g, fg.autograd.grad(g, x)[0]
    (tensor(12., grad_fn=<MulBackward0>), tensor(12.))
"""
from funcgrad import autograd, check
from funcgrad.autograd.grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.creation import *  # noqa: F403
from funcgrad.creation import __all__ as _creation_all
from funcgrad.ops import *  # noqa: F403
from funcgrad.ops import __all__ as _ops_all
from funcgrad.tensor import Tensor, _install_methods

_install_methods()

__all__ = ["Tensor", "autograd", "check", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", *_creation_all, *_ops_all]
__version__ = "0.1.0"
