"""Derivatives of indexing, joining and splitting ops. Names as in elementwise.py.

Every op here picks, moves or overwrites elements, so its gradient picks, moves or zeroes the same
places of ``g``: the rules share the helpers of formulas.py (``R.unindex`` adds g back where x[index]
took it). Gathering ops build one NumPy index for their kernel and rule alike. Integer index tensors
and masks are ``NONDIFF`` inputs; ``getitem``/``index_put`` take any NumPy index as a plain argument.
"""
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.structured import copy_to_write
from funcgrad.ops import formulas as R
from funcgrad.ops import kernels as K
from funcgrad.ops.inplace import inplace
from funcgrad.ops.registry import ELEMENTWISE, NONDIFF, allow_complex, composite, defop, tensor_method


# ----- index builders and checks (shared by kernels and rules) --------------------------------
def _dim(dim: int, ndim: int) -> int:
    """One dim as a non-negative index (0 for a 0-d input); IndexError (torch's message) when out of range."""
    return R.one_dim(dim, ndim)


def _gather_index(x_shape: tuple[int, ...], dim: int, index: Any, src_shape: Any = None) -> tuple[np.ndarray, ...]:
    """The index of ``gather``/``scatter``: ``index`` may be no larger than x (and src) apart from ``dim``."""
    index = R.owned(index)
    if index.ndim != len(x_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = _dim(dim, len(x_shape))
    too_big = any(n > m for i, (n, m) in enumerate(zip(index.shape, x_shape)) if i != d)
    if too_big or (src_shape and any(n > m for n, m in zip(index.shape, src_shape))):
        raise RuntimeError(f"Size does not match at dimension {d}: expected index {list(index.shape)} to be no "
                           f"larger than self {list(x_shape)} apart from dimension {d}"
                           + (f" and to be no larger than src {list(src_shape)}" if src_shape else ""))
    K.check_range(index, x_shape[d], d)
    return K.along_dim(index.shape, d, index)


def _select_index(x_shape: tuple[int, ...], dim: int, index: Any) -> tuple[Any, ...]:
    """The index of ``index_select``: a vector (or scalar) of positions along ``dim``."""
    index = R.owned(index)
    if index.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector, got {index.ndim} dims")
    d = _dim(dim, len(x_shape))
    K.check_range(index, x_shape[d], d)
    return (slice(None),) * d + (index.reshape(-1),)


def _take_along_index(x_shape: tuple[int, ...], indices: Any, dim: int | None) -> tuple[Any, ...]:
    """The index of ``take_along_dim``: flat positions when ``dim`` is None, else ``indices``
    along ``dim`` broadcast against x's other dims (negative indices count from the end, as torch)."""
    indices = R.owned(indices)
    if dim is None:
        flat = indices.reshape(-1)
        K.check_range(flat, int(np.prod(x_shape, dtype=np.int64)), 0)
        return np.unravel_index(flat, x_shape)
    if indices.ndim != len(x_shape):
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {len(x_shape)} dimensions for input, and {indices.ndim} dimensions for indices")
    return K.along_dim(x_shape, _dim(dim, len(x_shape)), indices)


def _narrow_start(x_shape: tuple[int, ...], dim: int, start: int, length: int) -> int:
    """``start`` made non-negative, after checking the range [start, start + length) fits in ``dim``."""
    size = x_shape[_dim(dim, len(x_shape))]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return start


# ----- kernels --------------------------------------------------------------------------------
def _getitem(x, index):
    """``x[index]`` with NumPy's basic and advanced indexing; basic indexing returns a view."""
    return K.pick(x, R.as_index(index))


def _index_put(x, index, values, accumulate=False):
    """A copy of ``x`` with ``x[index] = values`` (``+=`` when ``accumulate``, repeated indices adding up)."""
    return K.put(copy_to_write(x, values), R.as_index(index), values, accumulate)  # (on an error the copy is dropped)


def _cat(tensors, dim=0):
    """Join tensors along an existing dimension ``dim``; all other sizes must match."""
    shapes = [np.shape(t) for t in tensors]
    for i, shape in enumerate(shapes):
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    d = _dim(dim, len(shapes[0]))
    for i, shape in enumerate(shapes):
        if len(shape) != len(shapes[0]):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(shapes[0])} and {len(shape)} "
                               f"(tensor number {i} in the list)")
        for k, (a, b) in enumerate(zip(shapes[0], shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but "
                                   f"got size {b} for tensor number {i} in the list.")
    return np.concatenate(tensors, axis=d)


def _stack(tensors, dim=0):
    """Join tensors of one shape along a new dimension ``dim``."""
    first = np.shape(tensors[0])
    for i, t in enumerate(tensors):
        if np.shape(t) != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(first)} at entry 0 and "
                               f"{list(np.shape(t))} at entry {i}")
    return np.stack(tensors, axis=_dim(dim, len(first) + 1))


def _narrow(x, dim, start, length):
    """The view of ``x`` keeping ``length`` entries of ``dim`` from ``start`` (negative counts from the end)."""
    start = _narrow_start(x.shape, dim, start, length)
    return x[(slice(None),) * _dim(dim, x.ndim) + (slice(start, start + length),)]


def _select(x, dim, index):
    """The view of ``x`` at position ``index`` of ``dim``, which is removed."""
    d = _dim(dim, x.ndim)
    if not -x.shape[d] <= index < x.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(x.shape)} at dimension {d}")
    return x[(slice(None),) * d + (index, Ellipsis)]


def _split(x, split_size_or_sections, dim=0):
    """Split ``x`` along ``dim`` into views: pieces of ``split_size_or_sections`` entries (the last may be
    smaller), or of each size in that list (which must sum to ``x.shape[dim]``).

    Example:
        >>> import funcgrad as fg
        >>> [p.shape for p in fg.split(fg.zeros(5, 2), 2)]
        [(2, 2), (2, 2), (1, 2)]
    """
    d = _dim(dim, x.ndim)
    sizes = _split_sizes(x.shape[d], split_size_or_sections, dim)
    starts = np.cumsum([0] + sizes[:-1])
    return tuple(x[(slice(None),) * d + (slice(int(s), int(s) + n),)] for s, n in zip(starts, sizes))


def _split_sizes(size: int, split_size_or_sections: Any, dim: int) -> list[int]:
    """The sizes of ``split``'s pieces of a dimension of ``size`` entries."""
    if isinstance(split_size_or_sections, int | np.integer):
        step = int(split_size_or_sections)
        if step <= 0 and not (step == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                               if step == 0 else f"split expects split_size be non-negative, but got split_size={step}")
        return [min(step, size - s) for s in range(0, size, step)] if size else [0]
    sizes = [int(n) for n in split_size_or_sections]
    if sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                           f"at dimension {dim}), but got split_sizes={sizes}")
    return sizes


def _unbind(x, dim=0):
    """The views ``select(x, dim, i)`` for every i: ``x`` taken apart along ``dim``.

    Example:
        >>> import funcgrad as fg
        >>> [p.shape for p in fg.unbind(fg.zeros(2, 3), 1)]
        [(2,), (2,), (2,)]
    """
    d = _dim(dim, x.ndim)
    return tuple(x[(slice(None),) * d + (i, Ellipsis)] for i in range(x.shape[d]))


def _gather(x, dim, index):
    """``out[i][j][k] = x[index[i][j][k]][j][k]`` for ``dim=0`` (likewise for other dims); out has index's shape."""
    return x[_gather_index(x.shape, dim, index)]


def _scatter(x, dim, index, src):
    """A copy of ``x`` with ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``; ``src`` may be a scalar."""
    return _scatter_into(x, dim, index, src, accumulate=False)


def _scatter_add(x, dim, index, src):
    """As ``scatter``, adding ``src`` into x (repeated indices add up)."""
    return _scatter_into(x, dim, index, src, accumulate=True)


def _scatter_into(x: np.ndarray, dim: int, index: Any, src: Any, accumulate: bool) -> np.ndarray:
    src_shape = np.shape(src) or None
    if src_shape:
        src = src[tuple(slice(n) for n in np.shape(index))]  # only src's elements at index's positions are used
    return _index_put(x, _gather_index(x.shape, dim, index, src_shape), src, accumulate)


def _index_select(x, dim, index):
    """The entries of ``x`` at positions ``index`` (a vector) along ``dim``."""
    return x[_select_index(x.shape, dim, index)]


def _masked_fill(x, mask, value):
    """``x`` with ``value`` (a scalar or 0-d tensor) where the boolean ``mask`` is true."""
    if np.asarray(mask).dtype != np.bool_:
        raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with dtype {np.asarray(mask).dtype}")
    if np.ndim(value):
        raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got tensor with "
                           f"{np.ndim(value)} dimension(s).")
    return np.where(mask, value, x).astype(x.dtype, copy=False)


def _take_along_dim(x, indices, dim=None):
    """Entries of ``x`` at ``indices`` along ``dim`` (of the flattened x when ``dim`` is None)."""
    return K.pick(x, _take_along_index(x.shape, indices, dim))


def _pad_grad(g: Any, x_shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> Any:
    """Gradient of ``pad``: constant padding is undone by padding g with -pad (cropping what was
    added, zeros where x was cropped); the other modes add g back where each copy came from."""
    if mode == "constant":
        return F.pad(g, tuple(-p for p in pad))
    source = K.pad(np.arange(int(np.prod(x_shape, dtype=np.int64))).reshape(x_shape), pad, mode)
    return R.unindex(g, x_shape, np.unravel_index(source, x_shape))


def _scatter_src_grad(g: Any, x_shape: tuple[int, ...], dim: int, index: Any, src_shape: tuple[int, ...]) -> Any:
    """Gradient of scatter w.r.t. ``src``: g at the places written, 0 for the src elements left unused."""
    return R.pad_to(R.take(g, x_shape, _gather_index(x_shape, dim, index)), src_shape)


def _unsplit(g: tuple[Any, ...], x_shape: tuple[int, ...], split_size_or_sections: Any, dim: int) -> Any:
    """Gradient of ``split``: the pieces' gradients joined along ``dim`` (zeros for pieces that got none)."""
    d = _dim_from_end(dim, len(x_shape))  # g may carry leading batch dims
    sizes = _split_sizes(x_shape[d], split_size_or_sections, dim)
    shapes = [x_shape[:d] + (n,) + x_shape[d:][1:] for n in sizes]
    return F.cat(_zeros_for_missing(g, shapes), d)


def _unbind_grad(g: tuple[Any, ...], x_shape: tuple[int, ...], dim: int) -> Any:
    """Gradient of ``unbind``: the slices' gradients stacked along ``dim`` (zeros for slices that got none)."""
    d = _dim_from_end(dim, len(x_shape))
    slice_shape = x_shape[:d] + x_shape[d:][1:]
    return F.stack(_zeros_for_missing(g, [slice_shape] * len(g)), d)


def _zeros_for_missing(g: tuple[Any, ...], shapes: list[tuple[int, ...]]) -> list[Any]:
    """The gradients ``g`` of outputs of ``shapes``, zeros (with the others' batch dims) where one is None."""
    known = next(p for p, shape in zip(g, shapes) if p is not None)
    batch = np.shape(known)[:np.ndim(known) - len(shapes[0])]
    return [p if p is not None else np.zeros(batch + shape, known.dtype) for p, shape in zip(g, shapes)]


def _dim_from_end(dim: int, ndim: int) -> int:
    """``dim`` of an ``ndim``-d input counted from the end, valid for tangents with leading batch dims."""
    return R.from_end((dim,), ndim)[0]


def _write_jvp(x_t: Any, x: Any, index: Any, v_t: Any, v: Any, accumulate: bool) -> Any:
    """Writing v into x at ``index`` (``+=`` when accumulating) is linear in (x, v): the tangent writes
    v_t into x_t the same way, both given the batch dims of either."""
    full, ndim = R.core_index(index, np.shape(x))
    x_t, v_t = R.batched([x_t, v_t], [x, v])
    return F.index_put(x_t, full, R.align(v_t, v, ndim), accumulate)


def _scatter_jvp(x_t: Any, src_t: Any, x: Any, src: Any, dim: int, index: Any, accumulate: bool) -> Any:
    """scatter writes src[i][j] at index[i][j] along ``dim``: the tangent writes src_t there into x_t."""
    index = R.owned(index)
    place = _gather_index(np.shape(x), dim, index, np.shape(src) or None)
    if np.ndim(src):  # only src's elements at index's positions are written
        used = (Ellipsis,) + tuple(slice(n) for n in index.shape)
        src, src_t = src[used], src_t[used]
    return _write_jvp(x_t, x, place, src_t, src, accumulate)


# ----- indexing -------------------------------------------------------------------------------
getitem   = defop("getitem",   _getitem,   x=lambda g, x_shape, index: R.unindex(g, x_shape, index), view=True,
                                           jvp=lambda x_t, x_shape, index: R.take(x_t, x_shape, index))
index_put = defop("index_put", _index_put, x=lambda g, x_shape, index, accumulate: g if accumulate else R.zero_at(g, x_shape, index),
                                           values=lambda g, x_shape, index: R.take(g, x_shape, index),  # engine sums to values' shape
                                           jvp=lambda x_t, values_t, x, values, index, accumulate: _write_jvp(x_t, x, index, values_t, values, accumulate))
narrow    = defop("narrow",    _narrow,    x=lambda g, x_shape, dim, start, length: R.unnarrow(g, x_shape, dim, _narrow_start(x_shape, dim, start, length), length),
                                           jvp=lambda x_t, x_shape, dim, start, length: F.narrow(x_t, _dim_from_end(dim, len(x_shape)), start, length), view=True)
select    = defop("select",    _select,    x=lambda g, x_shape, dim, index: R.unselect(g, x_shape, dim, index), view=True,
                                           jvp=lambda x_t, x_shape, dim, index: F.select(x_t, _dim_from_end(dim, len(x_shape)), index))

# ----- gathering and scattering along a dim ---------------------------------------------------
gather         = defop("gather",         _gather,         x=lambda g, x_shape, dim, index: R.unindex(g, x_shape, _gather_index(x_shape, dim, index)),
                                                          index=NONDIFF, jvp=lambda x_t, x_shape, dim, index: R.take(x_t, x_shape, _gather_index(x_shape, dim, index)))
index_select   = defop("index_select",   _index_select,   x=lambda g, x_shape, dim, index: R.unindex(g, x_shape, _select_index(x_shape, dim, index)),
                                                          index=NONDIFF, jvp=lambda x_t, x_shape, dim, index: R.take(x_t, x_shape, _select_index(x_shape, dim, index)))
take_along_dim = defop("take_along_dim", _take_along_dim, x=lambda g, x_shape, indices, dim: R.unindex(g, x_shape, _take_along_index(x_shape, indices, dim)),
                                                          indices=NONDIFF, jvp=lambda x_t, x_shape, indices, dim: R.take(x_t, x_shape, _take_along_index(x_shape, indices, dim)))
scatter        = defop("scatter",        _scatter,        x=lambda g, x_shape, dim, index: R.zero_at(g, x_shape, _gather_index(x_shape, dim, index)),
                                                          index=NONDIFF, src=_scatter_src_grad,
                                                          jvp=lambda x_t, src_t, x, src, dim, index: _scatter_jvp(x_t, src_t, x, src, dim, index, False))
scatter_add    = defop("scatter_add",    _scatter_add,    x=lambda g: g, index=NONDIFF, src=_scatter_src_grad,
                                                          jvp=lambda x_t, src_t, x, src, dim, index: _scatter_jvp(x_t, src_t, x, src, dim, index, True))
masked_fill    = defop("masked_fill",    _masked_fill,    x=lambda g, mask: F.where(mask, 0.0, g), mask=NONDIFF,
                                                          value=lambda g, mask: R.select_grad(g, mask), jvp=ELEMENTWISE)
pad            = defop("pad",            K.pad,           x=lambda g, x_shape, pad, mode: _pad_grad(g, x_shape, pad, mode),
                                                          jvp=lambda x_t, pad, mode: F.pad(x_t, pad, mode))  # the fill value is constant

# ----- joining --------------------------------------------------------------------------------
cat   = defop("cat",   _cat,   tensors=lambda g, tensors_shape, dim: R.unconcat(g, tensors_shape, dim),
              sequence="tensors", jvp=lambda tensors_t, tensors, dim: F.cat(R.batched(tensors_t, tensors), _dim_from_end(dim, np.ndim(tensors[0]))))
stack = defop("stack", _stack, tensors=lambda g, tensors_shape, dim: R.unstack(g, len(tensors_shape), len(tensors_shape[0]) + 1, dim),
              sequence="tensors", jvp=lambda tensors_t, tensors, dim: F.stack(R.batched(tensors_t, tensors), _dim_from_end(dim, np.ndim(tensors[0]) + 1)))

tensor_method("__getitem__")(getitem)


@tensor_method("__setitem__")
def _setitem(self: Any, index: Any, value: Any) -> None:
    """``self[index] = value`` in place: records ``index_put`` as self's new history. On an expanded tensor, a
    basic index writes through the view it selects, as torch's does: that view's elements may not overlap."""
    if K.overlaps(self.data):
        region = self[index]
        if region._base is not None:
            region.copy_(value)
            return
    inplace(self, index_put, index, value)


# ----- splitting into views (one node with one output per piece, as torch) -----------------------
split  = defop("split",  _split,  x=lambda g, x_shape, split_size_or_sections, dim: _unsplit(g, x_shape, split_size_or_sections, dim), multi_output=True, view=True,
                                  jvp=lambda x_t, x_shape, split_size_or_sections, dim: F.split(x_t, split_size_or_sections, _dim_from_end(dim, len(x_shape))))
unbind = defop("unbind", _unbind, x=lambda g, x_shape, dim: _unbind_grad(g, x_shape, dim), multi_output=True, view=True,
                                  jvp=lambda x_t, x_shape, dim: F.unbind(x_t, _dim_from_end(dim, len(x_shape))))


@composite
def chunk(x: Any, chunks: int, dim: int = 0) -> tuple[Any, ...]:
    """Split ``x`` along ``dim`` into at most ``chunks`` views of equal size (the last may be smaller).

    Example:
        >>> import funcgrad as fg
        >>> [p.shape for p in fg.chunk(fg.zeros(6), 4)]
        [(2,), (2,), (2,)]
    """
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    step = -(-np.shape(x)[_dim(dim, np.ndim(x))] // chunks)  # ceil: every piece but the last has this size
    return split(x, step if step else [0] * chunks, dim)  # an empty x gives `chunks` empty views, as torch


# ----- complex inputs: these rules only move, copy or sum values, so they hold as they are --------
allow_complex(getitem, index_put, narrow, select, gather, index_select, take_along_dim, scatter, scatter_add,
              masked_fill, pad, cat, stack, split, unbind)
