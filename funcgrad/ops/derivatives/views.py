"""The derivative of writing through a view (PyTorch's CopySlices). Names as in elementwise.py.

``copy_slices(x, src, view_fn)`` is ``x`` with the region ``view_fn(x)`` replaced by ``src``;
``view_fn`` replays funcgrad view ops, so it selects the same region of an array or of a gradient.
"""
import funcgrad.ops as F
from funcgrad.ops.registry import LINEAR, defop


def _copy_slices(x, src, view_fn):
    """``x`` with the view ``view_fn(x)`` overwritten by ``src`` (a new array)."""
    out = x.copy()
    view_fn(out)[...] = src
    return out


def _alias(x):
    """A view of all of ``x``."""
    return x.view()


alias = defop("alias", _alias, x=lambda g: g, jvp=lambda x_t: F.alias(x_t), view=True)
copy_slices = defop("copy_slices", _copy_slices,
                    x=lambda g, view_fn: F.copy_slices(g, 0.0, view_fn),   # the overwritten region gets no gradient
                    src=lambda g, view_fn: view_fn(g), jvp=LINEAR)  # view_fn sees no batch dims: batches loop
