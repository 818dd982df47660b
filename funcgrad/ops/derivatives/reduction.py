"""Derivatives of reductions over ``dim`` (with ``keepdim``). Names as in elementwise.py."""
import numpy as np

from funcgrad.ops import formulas as R
from funcgrad.ops import kernels as K
from funcgrad.ops.registry import LINEAR, defop


def _sum(x, dim=None, keepdim=False):
    """Sum over ``dim`` (all dims when None)."""
    return np.sum(x, axis=_axes(dim), keepdims=keepdim)


def _mean(x, dim=None, keepdim=False):
    """Mean over ``dim`` (all dims when None)."""
    return np.mean(x, axis=_axes(dim), keepdims=keepdim)


def _axes(dim):
    return tuple(dim) if isinstance(dim, list) else dim


# ----- sums -----------------------------------------------------------------------------------
sum_to = defop("sum_to", K.sum_to, x=lambda g, x_shape, shape: R.expand_to(g, shape, x_shape), jvp=LINEAR)
sum    = defop("sum",    _sum,     x=lambda g, x_shape, dim, keepdim: R.unreduce(g, x_shape, dim, keepdim),
               jvp=LINEAR)
mean   = defop("mean",   _mean,    x=lambda g, x_shape, dim, keepdim: R.unreduce(g, x_shape, dim, keepdim) / R.count(x_shape, dim),
               jvp=LINEAR)
