"""The op table's public functions, gathered from ``funcgrad.ops.derivatives``.

Each function takes Tensors, arrays or scalars: given a Tensor it returns a Tensor (recording a
node when needed); given only arrays it returns the NumPy result.
"""
from funcgrad.ops.derivatives.elementwise import *  # noqa: F403
from funcgrad.ops.derivatives.reduction import *  # noqa: F403
from funcgrad.ops.derivatives.shape import *  # noqa: F403
from funcgrad.ops.registry import OPS

__all__ = sorted(OPS)
