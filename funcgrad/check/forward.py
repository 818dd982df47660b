"""Forward mode's Jacobians for the checks: one batched forward pass per input, identity tangents."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.core.tensor import Tensor

__all__ = ["forward_jacobian"]


def forward_jacobian(func: Callable[..., Any], inputs: Sequence[Any], index: int) -> list[np.ndarray]:
    """Forward mode's Jacobian of every floating output of ``func`` w.r.t. ``inputs[index]``.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple.
        inputs: the arguments; ``inputs[index]`` is a float Tensor.
        index: the input to push the identity tangents from (all its columns in one pass).

    Returns:
        One ``(out.size, in.size)`` float64 matrix per floating output (zeros where it has no tangent).

    Example:
        >>> import funcgrad as fg
        >>> forward_jacobian(lambda x: x * x, (fg.tensor([1.0, 2.0]),), 0)[0]
        array([[2., 0.],
               [0., 4.]])
    """
    x = inputs[index]
    n = x.data.size
    directions = np.eye(n, dtype=x.dtype).reshape((n, *x.shape))
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
                blocks.append(np.zeros((out.data.size, n)))
            else:  # (n, *out.shape): column k is the derivative along input element k
                blocks.append(np.asarray(tangent.data, dtype=np.float64).reshape(n, out.data.size).T)
    return blocks
