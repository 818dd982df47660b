"""The derivative of writing through a view (PyTorch's CopySlices). Names as in elementwise.py.

``copy_slices(x, src, view_fn)`` is ``x`` with the region ``view_fn(x)`` replaced by ``src``;
``view_fn`` replays funcgrad view ops, so it selects the same region of an array or of a gradient.
"""
import numpy as np

import funcgrad.ops as F
from funcgrad.core.structured import copy_to_write
from funcgrad.ops.registry import LINEAR, allow_complex, defop


def _copy_slices(x, src, view_fn):
    """``x`` with the view ``view_fn(x)`` overwritten by ``src`` (a new array)."""
    out = copy_to_write(x, src)
    view_fn(out)[...] = src
    return out


def _alias(x):
    """A view of all of ``x``."""
    return x.view()


def _per_direction(g, x_shape, fn):
    """``fn(g)``, one direction at a time when ``g`` carries a leading batch dim: ``view_fn`` replays the
    view ops for arrays of ``x``'s shape, without batch dims."""
    if np.ndim(g) == len(x_shape):
        return fn(g)
    return F.stack([fn(g[b]) for b in range(np.shape(g)[0])])


alias = defop("alias", _alias, x=lambda g: g, jvp=lambda x_t: F.alias(x_t), view=True)
copy_slices = defop("copy_slices", _copy_slices,  # the overwritten region gets no gradient
                    x=lambda g, x_shape, view_fn: _per_direction(g, x_shape, lambda d: F.copy_slices(d, 0.0, view_fn)),
                    src=lambda g, x_shape, view_fn: _per_direction(g, x_shape, view_fn),
                    jvp=LINEAR)  # LINEAR pushes a batch of tangents one direction at a time too

# ----- complex inputs: these rules only move, copy or sum values, so they hold as they are --------
allow_complex(alias, copy_slices)
