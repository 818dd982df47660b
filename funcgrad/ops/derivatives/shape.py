"""Derivatives of shape and view ops. Names as in elementwise.py.

Gradients may carry leading batch dimensions, so rules address dims from the end
(``R.from_end``) and build shapes with ``R.batch_shape``.
"""
import numpy as np

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops.registry import LINEAR, defop


def _reshape(x, shape):
    """``x`` with a new shape (a view when possible); one entry may be -1."""
    return np.reshape(x, shape)


def _broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view)."""
    return np.broadcast_to(x, shape)


def _permute(x, dims):
    """``x`` with its dims reordered."""
    return np.transpose(x, dims)


def _transpose(x, dim0, dim1):
    """``x`` with ``dim0`` and ``dim1`` swapped."""
    return np.swapaxes(x, dim0, dim1)


# ----- views ----------------------------------------------------------------------------------
reshape      = defop("reshape",      _reshape,      x=lambda g, x_shape, out: F.reshape(g, R.batch_shape(g, out) + x_shape), jvp=LINEAR, view=True)
broadcast_to = defop("broadcast_to", _broadcast_to, x=lambda g: g, jvp=LINEAR, view=True)  # the engine sums g back to x's shape
permute      = defop("permute",      _permute,      x=lambda g, x_shape, dims: F.permute(g, R.from_end(np.argsort([d % len(x_shape) for d in dims]), len(x_shape), g)), jvp=LINEAR, view=True)
transpose    = defop("transpose",    _transpose,    x=lambda g, x_shape, dim0, dim1: F.transpose(g, *R.from_end((dim0, dim1), len(x_shape))), jvp=LINEAR, view=True)
