"""Derivatives of indexing, joining and splitting ops. Names as in elementwise.py.

Every op here picks, moves or overwrites elements, so its gradient picks, moves or zeroes the same
places of ``g``: the rules share the helpers of formulas.py (``R.unindex`` adds g back where x[index]
took it). Gathering ops build one NumPy index for their kernel and rule alike. Integer index tensors
and masks are ``NONDIFF`` inputs; ``getitem``/``index_put`` take any NumPy index as a plain argument.
"""
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops.registry import LINEAR, NONDIFF, composite, defop, tensor_method

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


# ----- index builders and checks (shared by kernels and rules) --------------------------------
def _pick(x: np.ndarray, index: tuple[Any, ...]) -> np.ndarray:
    """``x[index]`` as an array (a view for basic indices), with torch's out-of-range message."""
    if not any(i is Ellipsis for i in index):
        index = index + (Ellipsis,)  # so x[0, 0] is a 0-d view rather than a scalar copy
    try:
        return x[index]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None


def _dim(dim: int, ndim: int) -> int:
    return R.normalize_dims(dim, ndim)[0]


def _check_range(index: np.ndarray, size: int, dim: int) -> None:
    """Indices must lie in [0, size): gather and scatter do not wrap negatives (as torch)."""
    bad = index[(index < 0) | (index >= size)]
    if bad.size:
        raise RuntimeError(f"index {bad.flat[0]} is out of bounds for dimension {dim} with size {size}")


def _along_dim(sizes: tuple[int, ...], dim: int, index: np.ndarray) -> tuple[np.ndarray, ...]:
    """A NumPy index taking ``index`` along ``dim`` and position i along every other dim of ``sizes``."""
    grids = list(np.ix_(*[np.arange(n) for n in sizes]))
    grids[dim] = index
    return tuple(grids)


def _gather_index(x_shape: tuple[int, ...], dim: int, index: Any, src_shape: Any = None) -> tuple[np.ndarray, ...]:
    """The index of ``gather``/``scatter``: ``index`` may be no larger than x (and src) apart from ``dim``."""
    index = np.asarray(index)
    if index.ndim != len(x_shape):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    d = _dim(dim, len(x_shape))
    bounds = [x_shape] + ([src_shape] if src_shape else [])
    if any(i != d and n > bound[i] for bound in bounds for i, n in enumerate(index.shape)) or (
            src_shape and index.shape[d] > src_shape[d]):
        raise RuntimeError(f"Size does not match at dimension {d}: expected index {list(index.shape)} to be no "
                           f"larger than self {list(x_shape)} apart from dimension {d}"
                           + (f" and to be no larger than src {list(src_shape)}" if src_shape else ""))
    _check_range(index, x_shape[d], d)
    return _along_dim(index.shape, d, index)


def _select_index(x_shape: tuple[int, ...], dim: int, index: Any) -> tuple[Any, ...]:
    """The index of ``index_select``: a vector (or scalar) of positions along ``dim``."""
    index = np.asarray(index)
    if index.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector, got {index.ndim} dims")
    d = _dim(dim, len(x_shape))
    _check_range(index, x_shape[d], d)
    return (slice(None),) * d + (index.reshape(-1),)


def _take_along_index(x_shape: tuple[int, ...], indices: Any, dim: int | None) -> tuple[Any, ...]:
    """The index of ``take_along_dim``: flat positions when ``dim`` is None, else ``indices``
    along ``dim`` broadcast against x's other dims (negative indices count from the end, as torch)."""
    indices = np.asarray(indices)
    if dim is None:
        flat = indices.reshape(-1)
        _check_range(flat, int(np.prod(x_shape, dtype=np.int64)), 0)
        return np.unravel_index(flat, x_shape)
    if indices.ndim != len(x_shape):
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {len(x_shape)} dimensions for input, and {indices.ndim} dimensions for indices")
    return _along_dim(x_shape, _dim(dim, len(x_shape)), indices)


def _narrow_start(x_shape: tuple[int, ...], dim: int, start: int, length: int) -> int:
    """``start`` made non-negative, after checking the range [start, start + length) fits in ``dim``."""
    size = x_shape[_dim(dim, len(x_shape))]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    start = start + size if start < 0 else start
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return start


def _pad_widths(shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> list[tuple[int, int]]:
    """torch's ``pad`` (pairs from the last dim backwards) as one (before, after) pair per dim."""
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > len(shape):
        raise RuntimeError(f"Padding length should be less than or equal to two times the input dimension but "
                           f"got padding length {len(pad)} and input of dimension {len(shape)}")
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}; use one of {', '.join(_PAD_MODES)}")
    pairs = [(0, 0)] * (len(shape) - len(pad) // 2) + [(pad[i], pad[i + 1]) for i in range(len(pad) - 2, -1, -2)]
    for d, (n, pair) in enumerate(zip(shape, pairs)):
        if (mode == "reflect" and max(pair) >= n) or (mode == "circular" and max(pair) > n):
            raise RuntimeError(f"Padding size should be less than{'' if mode == 'reflect' else ' or equal to'} the "
                               f"corresponding input dimension, but got: padding {pair} at dimension {d} of input "
                               f"{list(shape)}")
    return pairs


# ----- kernels --------------------------------------------------------------------------------
def _getitem(x, index):
    """``x[index]`` with NumPy's basic and advanced indexing; basic indexing returns a view."""
    return _pick(x, R.as_index(index))


def _index_put(x, index, values, accumulate=False):
    """A copy of ``x`` with ``x[index] = values`` (``+=`` when ``accumulate``, repeated indices adding up)."""
    out = np.array(x, copy=True)
    index = R.as_index(index)
    _pick(out, index)  # raises torch's message for an index out of range
    if accumulate:
        np.add.at(out, index, values)
    else:
        out[index] = values
    return out


def _cat(tensors, dim=0):
    """Join tensors along an existing dimension ``dim``; all other sizes must match."""
    first = np.shape(tensors[0])
    for i, t in enumerate(tensors):
        shape = np.shape(t)
        if not shape:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
        if len(shape) != len(first):
            raise RuntimeError(f"Tensors must have same number of dimensions: got {len(first)} and {len(shape)} "
                               f"(tensor number {i} in the list)")
        d = _dim(dim, len(first))
        for k, (a, b) in enumerate(zip(first, shape)):
            if k != d and a != b:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size {a} but "
                                   f"got size {b} for tensor number {i} in the list.")
    return np.concatenate(tensors, axis=_dim(dim, len(first)))


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
    return _pick(x, _take_along_index(x.shape, indices, dim))


def _pad(x, pad, mode="constant", value=0.0):
    """Pad the last ``len(pad) // 2`` dims of ``x``; ``pad`` = (last_before, last_after, 2nd_last_before, ...),
    negative sizes crop. ``mode``: 'constant' (with ``value``), 'reflect', 'replicate' or 'circular'."""
    pairs = _pad_widths(x.shape, tuple(pad), mode)
    x = x[tuple(slice(max(-b, 0), n + min(a, 0)) for (b, a), n in zip(pairs, x.shape))]
    widths = [(max(b, 0), max(a, 0)) for b, a in pairs]
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=_PAD_MODES[mode])


def _pad_grad(g: Any, x_shape: tuple[int, ...], pad: tuple[int, ...], mode: str) -> Any:
    """Gradient of ``pad``: constant padding is undone by padding g with -pad (cropping what was
    added, zeros where x was cropped); the other modes add g back where each copy came from."""
    if mode == "constant":
        return F.pad(g, tuple(-p for p in pad))
    source = _pad(np.arange(int(np.prod(x_shape, dtype=np.int64))).reshape(x_shape), pad, mode)
    return R.unindex(g, x_shape, np.unravel_index(source, x_shape))


def _scatter_src_grad(g: Any, x_shape: tuple[int, ...], dim: int, index: Any, src_shape: tuple[int, ...]) -> Any:
    """Gradient of scatter w.r.t. ``src``: g at the places written, 0 for the src elements left unused."""
    return R.pad_to(R.take(g, x_shape, _gather_index(x_shape, dim, index)), src_shape)


# ----- indexing -------------------------------------------------------------------------------
getitem   = defop("getitem",   _getitem,   x=lambda g, x_shape, index: R.unindex(g, x_shape, index), jvp=LINEAR, view=True)
index_put = defop("index_put", _index_put, x=lambda g, x_shape, index, accumulate: g if accumulate else R.zero_at(g, x_shape, index),
                                           values=lambda g, x_shape, index: R.take(g, x_shape, index))  # engine sums to values' shape
narrow    = defop("narrow",    _narrow,    x=lambda g, x_shape, dim, start, length: R.unnarrow(g, x_shape, dim, _narrow_start(x_shape, dim, start, length), length),
                                           jvp=LINEAR, view=True)
select    = defop("select",    _select,    x=lambda g, x_shape, dim, index: R.unselect(g, x_shape, dim, index), jvp=LINEAR, view=True)

# ----- gathering and scattering along a dim ---------------------------------------------------
gather         = defop("gather",         _gather,         x=lambda g, x_shape, dim, index: R.unindex(g, x_shape, _gather_index(x_shape, dim, index)),
                                                          index=NONDIFF, jvp=LINEAR)
index_select   = defop("index_select",   _index_select,   x=lambda g, x_shape, dim, index: R.unindex(g, x_shape, _select_index(x_shape, dim, index)),
                                                          index=NONDIFF, jvp=LINEAR)
take_along_dim = defop("take_along_dim", _take_along_dim, x=lambda g, x_shape, indices, dim: R.unindex(g, x_shape, _take_along_index(x_shape, indices, dim)),
                                                          indices=NONDIFF, jvp=LINEAR)
scatter        = defop("scatter",        _scatter,        x=lambda g, x_shape, dim, index: R.zero_at(g, x_shape, _gather_index(x_shape, dim, index)),
                                                          index=NONDIFF, src=_scatter_src_grad)
scatter_add    = defop("scatter_add",    _scatter_add,    x=lambda g: g, index=NONDIFF, src=_scatter_src_grad)
masked_fill    = defop("masked_fill",    _masked_fill,    x=lambda g, mask: F.where(mask, 0.0, g), mask=NONDIFF,
                                                          value=lambda g, mask: R.select_grad(g, mask))
pad            = defop("pad",            _pad,            x=lambda g, x_shape, pad, mode: _pad_grad(g, x_shape, pad, mode))

# ----- joining --------------------------------------------------------------------------------
cat   = defop("cat",   _cat,   tensors=lambda g, tensors, dim: R.unconcat(g, [np.shape(t) for t in tensors], dim),
              sequence="tensors", jvp=LINEAR)
stack = defop("stack", _stack, tensors=lambda g, tensors, dim: R.unstack(g, len(tensors), np.ndim(tensors[0]) + 1, dim),
              sequence="tensors", jvp=LINEAR)

tensor_method("__getitem__")(getitem)


@tensor_method("__setitem__")
def _setitem(self: Any, index: Any, value: Any) -> None:
    """``self[index] = value`` in place: records ``index_put`` as self's new history."""
    from funcgrad.tensor import _inplace

    _inplace(self, index_put, index, value)


# ----- splitting into views -------------------------------------------------------------------
@composite
def split(x: Any, split_size_or_sections: int | list[int], dim: int = 0) -> tuple[Any, ...]:
    """Split ``x`` along ``dim`` into views.

    Args:
        x: the tensor to split.
        split_size_or_sections: the size of each piece (the last may be smaller), or a list of sizes
            that sum to ``x.shape[dim]``.
        dim: the dimension to split.

    Returns:
        A tuple of views of ``x`` (each with its own ``NarrowBackward0`` node).

    Example:
        >>> import funcgrad as fg
        >>> [p.shape for p in fg.split(fg.zeros(5, 2), 2)]
        [(2, 2), (2, 2), (1, 2)]
    """
    size = np.shape(x)[_dim(dim, np.ndim(x))]
    if isinstance(split_size_or_sections, int | np.integer):
        step = int(split_size_or_sections)
        if step <= 0 and not (step == 0 and size == 0):
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}"
                               if step == 0 else f"split expects split_size be non-negative, but got split_size={step}")
        sizes = [min(step, size - s) for s in range(0, size, step)] if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {dim}), but got split_sizes={sizes}")
    starts = np.cumsum([0] + sizes[:-1])
    return tuple(narrow(x, dim, int(s), n) for s, n in zip(starts, sizes))


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
    size = np.shape(x)[_dim(dim, np.ndim(x))]
    return split(x, max(-(-size // chunks), 1), dim)


@composite
def unbind(x: Any, dim: int = 0) -> tuple[Any, ...]:
    """The views ``select(x, dim, i)`` for every i: ``x`` taken apart along ``dim``.

    Example:
        >>> import funcgrad as fg
        >>> [p.shape for p in fg.unbind(fg.zeros(2, 3), 1)]
        [(2,), (2,), (2,)]
    """
    return tuple(select(x, dim, i) for i in range(np.shape(x)[_dim(dim, np.ndim(x))]))
