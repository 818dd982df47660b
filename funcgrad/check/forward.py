"""Forward mode's Jacobians for the checks: one batched forward pass per input, identity tangents."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.check.numerical import real_view
from funcgrad.core.tensor import Tensor

__all__ = ["forward_jacobian"]


def forward_jacobian(func: Callable[..., Any], inputs: Sequence[Any], index: int) -> list[np.ndarray]:
    """Forward mode's Jacobian of every floating output of ``func`` w.r.t. ``inputs[index]``.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple.
        inputs: the arguments; ``inputs[index]`` is a float Tensor.
        index: the input to push the identity tangents from (all its columns in one pass).

    Returns:
        One float64 matrix per floating output, rows and columns in real coordinates (``real_view``): complex
        values count twice (real, imaginary). Zeros where an output has no tangent.

    Example:
        >>> import funcgrad as fg
        >>> forward_jacobian(lambda x: x * x, (fg.tensor([1.0, 2.0]),), 0)[0]
        array([[2., 0.],
               [0., 4.]])
    """
    x = inputs[index]
    n = real_view(x.data).size  # a complex input: its real and imaginary parts are separate columns
    directions = np.eye(n, dtype=x.data.real.dtype).view(x.dtype).reshape((n, *x.shape))
    with forward_ad.dual_level():
        args = list(inputs)
        args[index] = forward_ad.make_dual(x, directions)
        result = func(*args)
        outputs = [o for o in (result if isinstance(result, tuple | list) else (result,))
                   if isinstance(o, Tensor) and o.dtype.kind in "fc"]
        blocks = []
        for out in outputs:
            tangent = forward_ad.unpack_dual(out).tangent
            if tangent is None:
                blocks.append(np.zeros((real_view(out.data).size, n)))
            else:  # (n, *out.shape): column k is the derivative along input element k
                blocks.append(real_view(tangent.data).astype(np.float64).reshape(n, -1).T)
    return blocks
