"""The derivative of writing through a view (PyTorch's CopySlices). Names as in elementwise.py.

``copy_slices(x, src, view_fn)`` is ``x`` with the region ``view_fn(x)`` replaced by ``src``;
``view_fn`` replays funcgrad view ops, so it selects the same region of an array or of a gradient.
It replays them past the dispatch layers (forward AD, anomaly mode...), so rules apply it through the op
``view_region(x, view_fn)``, which those layers see: a tangent carried by ``g`` reaches the region of ``g``.
"""
import numpy as np

import funcgrad.ops as F
from funcgrad.core.structured import copy_to_write
from funcgrad.ops import kernels as K
from funcgrad.ops.registry import LINEAR, allow_complex, defop


def _copy_slices(x, src, view_fn):
    """``x`` with the view ``view_fn(x)`` overwritten by ``src`` (a new array)."""
    out = copy_to_write(x, src)
    K.writable_view(view_fn(out), out)[...] = src  # (a region of an expanded view is read-only, out is not)
    return out


def _view_region(x, view_fn):
    """The region ``view_fn(x)`` of ``x`` (a new array: the region of a gradient, not a view of it)."""
    return np.array(view_fn(x), copy=True)


def _alias(x):
    """A view of all of ``x``."""
    return x.view()


def _per_direction(g, ndim, fn):
    """``fn(g)``, one direction at a time when ``g`` has a leading batch dim beyond its ``ndim``: ``view_fn``
    replays the view ops for arrays without batch dims."""
    if np.ndim(g) == ndim:
        return fn(g)
    return F.stack([fn(g[b]) for b in range(np.shape(g)[0])])


def _into_zeros(g, x_shape, view_fn):
    """view_region's rule: zeros of ``x``'s shape with the region ``view_fn`` selects set to ``g``."""
    region_ndim = np.ndim(view_fn(np.empty(x_shape, bool)))
    return _per_direction(g, region_ndim, lambda d: F.copy_slices(np.zeros(x_shape, np.result_type(d)), d, view_fn))


alias = defop("alias", _alias, x=lambda g: g, jvp=lambda x_t: F.alias(x_t), view=True)
copy_slices = defop("copy_slices", _copy_slices,  # the overwritten region gets no gradient
                    x=lambda g, x_shape, view_fn: _per_direction(g, len(x_shape),
                                                                 lambda d: F.copy_slices(d, 0.0, view_fn)),
                    src=lambda g, x_shape, view_fn: _per_direction(g, len(x_shape),
                                                                   lambda d: F.view_region(d, view_fn)),
                    jvp=LINEAR)  # LINEAR pushes a batch of tangents one direction at a time too
view_region = defop("view_region", _view_region, x=_into_zeros, jvp=LINEAR)  # copy_slices's src rule

# ----- complex inputs: these rules only move, copy or sum values, so they hold as they are --------
allow_complex(alias, copy_slices, view_region)
