"""funcgrad: automatic differentiation for NumPy code, with PyTorch's autograd semantics.

Example:
    >>> import funcgrad as fg
    >>> x = fg.tensor(2.0, requires_grad=True)
    >>> y = x ** 3
    >>> (g,) = fg.autograd.grad(y, x, create_graph=True)
    >>> g, fg.autograd.grad(g, x)[0]
    (tensor(12., grad_fn=<MulBackward0>), tensor(12.))

Layers, each importing only those below it: ``funcgrad.core`` (Tensor, graph, engine, mode state),
``funcgrad.ops`` (the op table; installs the Tensor methods), ``funcgrad.autograd`` (the public API),
then ``funcgrad.functional``, ``funcgrad.func`` and ``funcgrad.check``.
"""
import sys

from funcgrad import core

# Modules that moved into the core keep their old import paths, set before anything else imports them.
# ``funcgrad.tensor`` is the factory function; ``from funcgrad.tensor import Tensor`` still finds the class.
sys.modules[f"{__name__}.tensor"] = core.tensor
for _module in (core.dispatch, core.engine, core.grad_mode, core.graph, core.structured):
    sys.modules[f"{__name__}.autograd.{_module.__name__.rpartition('.')[2]}"] = _module

from funcgrad import autograd, check, func, functional, linalg, nn, numpy, optim, optimize  # noqa: E402
from funcgrad import ops as _ops  # noqa: E402
from funcgrad.core.grad_mode import (  # noqa: E402
    enable_grad,
    inference_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from funcgrad.core.tensor import Tensor  # noqa: E402
from funcgrad.creation import *  # noqa: E402, F403
from funcgrad.creation import __all__ as _creation_all  # noqa: E402
from funcgrad.ops.registry import SIGNATURES  # noqa: E402
from funcgrad.ops.tensor_methods import device  # noqa: E402

# the table's linalg_* entries are public as funcgrad.linalg.<torch name>, not at the top level
_ops_all = [name for name in _ops.__all__ if not name.startswith("linalg_")]
globals().update({name: getattr(_ops, name) for name in _ops_all})
globals().update(SIGNATURES)  # torch's full signatures (add's alpha, ...) over the table's ops

__all__ = ["Tensor", "device", "autograd", "check", "func", "functional", "linalg", "nn", "numpy", "optim", "optimize",
            "no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", *_creation_all, *_ops_all]
__version__ = "0.1.0"
