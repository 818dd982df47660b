"""Derivatives of shape and view ops. Names as in elementwise.py.

Gradients may carry leading batch dimensions, so rules address dims from the end (``R.from_end``)
and keep ``g``'s leading dims with ``_batch``. Ops marked ``view=True`` return NumPy views that share
memory (and the version counter) with their input; ``flip``, ``roll``, ``repeat``, ``diag`` copy, as torch.
Rules read only input shapes, never the output, so writing into a view does not void its graph.
"""
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.ops import formulas as R
from funcgrad.ops import kernels as K
from funcgrad.ops.registry import allow_complex, composite, defop, tensor_method


def _batch(g, ndim):
    """The leading batch dims of ``g`` in front of an ``ndim``-d output."""
    return tuple(np.shape(g)[: np.ndim(g) - ndim])


def _tuple(dims):
    """An int or a sequence of ints as a tuple."""
    return (dims,) if isinstance(dims, int | np.integer) else tuple(dims)


def _dim(dim, ndim):
    """One dim as a non-negative index (0 for a 0-d input); IndexError (torch's message) when out of range."""
    return R.one_dim(dim, ndim)


# ----- shapes the kernels and the rules agree on -------------------------------------------------
def _flat_shape(shape, start_dim, end_dim):
    """``shape`` with dims start_dim..end_dim merged into one (a 0-d shape becomes (1,), as torch)."""
    start, end = _dim(start_dim, len(shape)), _dim(end_dim, len(shape))
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return tuple(shape[:start]) + (int(np.prod(shape[start:end + 1], dtype=np.int64)),) + tuple(shape[end + 1:])


def _unflat_shape(shape, dim, sizes):
    """``shape`` with dim ``dim`` split into ``sizes`` (one of which may be -1)."""
    d, sizes = _dim(dim, len(shape)), tuple(sizes)
    if -1 not in sizes and np.prod(sizes, dtype=np.int64) != shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {dim} "
                           f"({shape[d]}) in the input tensor")
    return tuple(shape[:d]) + sizes + tuple(shape[d + 1:])


def _squeezed_shape(shape, dim):
    """``shape`` without the dims of size 1 among ``dim`` (all dims when None); other dims stay, as torch."""
    dims = range(len(shape)) if dim is None else [_dim(d, len(shape)) for d in _tuple(dim)]
    return tuple(n for i, n in enumerate(shape) if n != 1 or i not in dims)


def _expanded_shape(shape, sizes):
    """The shape ``expand(sizes)`` gives: -1 keeps a size, 1s may grow, new dims go in front."""
    lead = len(sizes) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(shape)})")
    out = [0] * len(sizes)
    for i in reversed(range(len(sizes))):  # checked from the last dim, as torch
        size = sizes[i]
        if i < lead and size == -1:
            raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
                               f"dimension {i}")
        own = shape[i - lead] if i >= lead else 1
        if size != -1 and own not in (1, size):
            raise RuntimeError(f"The expanded size of the tensor ({size}) must match the existing size ({own}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
        out[i] = own if size == -1 else size
    return tuple(out)


# ----- kernels --------------------------------------------------------------------------------
def _reshape(x, shape):
    """``x`` with a new shape (a view when possible, else a copy); one entry may be -1."""
    return np.reshape(x, shape)


def _view(x, shape):
    """``x`` with a new shape, sharing its memory; one entry may be -1.

    Raises:
        RuntimeError: when the shape cannot be had without a copy (use ``reshape``) or has the wrong size.
    """
    out = np.asarray(x).view()
    try:
        out.shape = shape  # NumPy refuses, rather than copies, when strides do not allow it
    except AttributeError:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.") from None
    except ValueError:
        raise RuntimeError(f"shape '{list(_tuple(shape))}' is invalid for input of size {out.size}") from None
    return out


def _flatten(x, start_dim=0, end_dim=-1):
    """``x`` with dims start_dim..end_dim merged into one (a view when possible)."""
    return np.reshape(x, _flat_shape(np.shape(x), start_dim, end_dim))


def _unflatten(x, dim, sizes):
    """``x`` with dim ``dim`` split into ``sizes`` (one may be -1)."""
    return np.reshape(x, _unflat_shape(np.shape(x), dim, sizes))


def _squeeze(x, dim=None):
    """``x`` without its dims of size 1 (only those among ``dim``, an int or a tuple, when given)."""
    return np.reshape(x, _squeezed_shape(np.shape(x), dim))


def _unsqueeze(x, dim):
    """``x`` with a new dim of size 1 at ``dim``."""
    return np.expand_dims(x, dim)


def _broadcast_to(x, shape):
    """``x`` broadcast to ``shape`` (a read-only view); -1 keeps a size, as torch's (expand's rules)."""
    if type(shape) is tuple and (not shape or min(shape) >= 0):  # (the common call, a gradient spread back)
        return K.broadcast_view(x, shape)
    return K.broadcast_view(x, _expanded_shape(np.shape(x), _tuple(shape)))


def _expand(x, sizes):
    """``x`` broadcast to ``sizes``, where -1 keeps a size (a read-only view)."""
    return K.broadcast_view(x, _expanded_shape(np.shape(x), _tuple(sizes)))


def _permute(x, dims):
    """``x`` with its dims reordered."""
    return np.transpose(x, dims)


def _transpose(x, dim0, dim1):
    """``x`` with ``dim0`` and ``dim1`` swapped."""
    return x.swapaxes(dim0, dim1) if type(x) is np.ndarray else np.swapaxes(x, dim0, dim1)  # (without the wrapper)


def _movedim(x, source, destination):
    """``x`` with dims ``source`` (an int or a tuple) moved to ``destination``, the others in order."""
    return np.moveaxis(x, source, destination)


def _diagonal(x, offset=0, dim1=0, dim2=1):
    """The diagonal of ``x`` over ``dim1`` and ``dim2``, as its last dim (a view).

    ``offset`` > 0 is above the main diagonal, < 0 below.
    """
    out = np.diagonal(x, offset, dim1, dim2)
    if isinstance(out, np.ndarray):  # NumPy's is read-only; torch's is writable (a traced one stays read-only)
        out.flags.writeable = x.flags.writeable
    return out


def _repeat(x, sizes):
    """``x`` tiled ``sizes[i]`` times along dim i; extra leading sizes add dims (a copy)."""
    sizes = _tuple(sizes)
    if len(sizes) < np.ndim(x):
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions "
                           "of tensor")
    return np.tile(x, sizes)


def _flip(x, dims):
    """``x`` reversed along ``dims`` (a copy); 0 and -1 name no axis of a 0-d ``x``, as torch."""
    dims = _tuple(dims)
    axes = R.normalize_dims(dims, np.ndim(x))
    if len(axes) < len(dims) and np.ndim(x):
        raise RuntimeError(f"dim {next(a for a in axes if sum(d % np.ndim(x) == a for d in dims) > 1)} appears "
                           f"multiple times in the list of dims")
    return np.flip(x, axes).copy() if axes else np.array(x, copy=True)


def _roll(x, shifts, dims=None):
    """``x`` shifted cyclically by ``shifts`` along ``dims``; over the flattened input when None."""
    return np.roll(x, shifts, dims)


def _diag(x, diagonal=0):
    """For 1-D ``x``, the square matrix with ``x`` on its ``diagonal``-th diagonal; for 2-D ``x``, that
    diagonal (a copy)."""
    if np.ndim(x) not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {np.ndim(x)}D")
    out = np.diag(x, diagonal)
    return out.copy() if np.ndim(x) == 2 else out


def _triu(x, diagonal=0):
    """``x`` with the elements below its ``diagonal``-th diagonal zeroed (over the last two dims)."""
    _check_matrix("triu", x)
    return np.triu(x, diagonal)


def _tril(x, diagonal=0):
    """``x`` with the elements above its ``diagonal``-th diagonal zeroed (over the last two dims)."""
    _check_matrix("tril", x)
    return np.tril(x, diagonal)


def _trace(x):
    """The sum of the main diagonal of a matrix."""
    if np.ndim(x) != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {np.ndim(x)}")
    return np.trace(x)


def _view_as_real(x):
    """A complex tensor as (real, imaginary) pairs in a new last dim of size 2: a view, as torch's."""
    if np.result_type(x).kind != "c":
        raise RuntimeError("view_as_real is only supported for complex tensors")
    x = np.asarray(x)
    return x[..., np.newaxis].view(np.real(x).dtype)  # a new size-1 axis is contiguous whatever x's strides


def _view_as_complex(x):
    """Pairs (real, imaginary) in a last dim of size 2 as complex numbers: a view, as torch's, when the pairs
    are contiguous (else a copy; torch raises then)."""
    if np.shape(x)[-1:] != (2,):
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if np.result_type(x).kind != "f":
        raise RuntimeError(f"view_as_complex is only supported for floating point tensors, but got {np.result_type(x)}")
    x = np.asarray(x)
    if x.dtype in (np.float32, np.float64) and x.strides[-1] == x.itemsize:
        return x.view(np.result_type(x.dtype, np.complex64))[..., 0]
    return x[..., 0] + 1j * x[..., 1]


def _check_matrix(name, x):
    if np.ndim(x) < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")


# ----- rules longer than one line ---------------------------------------------------------------
def _reshape_back(g, x_shape, out_ndim):
    """Gradient of any reshaping op: g (*batch, *out_shape) -> (*batch, *x_shape)."""
    return F.reshape(g, _batch(g, out_ndim) + tuple(x_shape))


def _permute_grad(g, x_shape, dims):
    """The inverse permutation of g's trailing dims (its batch dims stay in front)."""
    return F.permute(g, R.from_end(np.argsort([d % len(x_shape) for d in dims]), len(x_shape), g))


def _movedim_grad(g, x_shape, source, destination):
    """Move g's dims back from ``destination`` to ``source`` (counted from the end, past batch dims)."""
    n = len(x_shape)
    return F.movedim(g, R.from_end(_tuple(destination), n), R.from_end(_tuple(source), n))


def _repeat_grad(g, x_shape, sizes):
    """Sum g over the copies: (*batch, r_0 n_0, ..., r_k n_k) -> (*batch, r_0, n_0, ..., r_k, n_k),
    summed over the r_i, -> (*batch, *x_shape)."""
    sizes = _tuple(sizes)
    k = len(sizes)
    padded = (1,) * (k - len(x_shape)) + tuple(x_shape)
    batch = _batch(g, k)
    split = tuple(n for pair in zip(sizes, padded) for n in pair)
    return F.reshape(F.sum(F.reshape(g, batch + split), tuple(range(-2 * k, 0, 2))), batch + tuple(x_shape))


def _flip_dims(dims, ndim):
    """The dims of a flip counted from the end (none for a 0-d input), for gradients with batch dims."""
    return R.from_end(R.normalize_dims(_tuple(dims), ndim), ndim)


def _roll_grad(g, x_shape, shifts, dims):
    """Roll g back by -shifts (over the flattened trailing dims when ``dims`` is None)."""
    back = tuple(-s for s in _tuple(shifts))
    if dims is not None:
        return F.roll(g, back, R.from_end(_tuple(dims), len(x_shape)))
    batch = _batch(g, len(x_shape))
    flat = F.reshape(g, batch + (int(np.prod(x_shape, dtype=np.int64)),))
    return F.reshape(F.roll(flat, back, -1), batch + tuple(x_shape))


def _diagonal_grad(g, x_shape, offset, dim1, dim2):
    """Gradient of diagonal: g written onto that diagonal of zeros shaped (*batch, *x_shape)."""
    d1, d2 = R.from_end((dim1, dim2), len(x_shape))
    zeros = np.zeros(_batch(g, len(x_shape) - 1) + tuple(x_shape), g.dtype)
    return F.copy_slices(zeros, g, lambda base: F.diagonal(base, offset, d1, d2))


def _diag_grad(g, x_shape, diagonal):
    """1-D input: the diagonal of g; 2-D input: g on that diagonal of a zero matrix."""
    if len(x_shape) == 1:
        return F.diagonal(g, diagonal, -2, -1)
    return _diagonal_grad(g, x_shape, diagonal, 0, 1)


# ----- forward-mode rules: the op on the tangent, its batch dims kept in front ----------------------
def _reshape_jvp(x_t, x, out):
    """Any reshaping op is linear: the tangent reshaped to the output's shape after its batch dims."""
    return F.reshape(x_t, R.batch_shape(x_t, x) + out.shape)


def _repeat_jvp(x_t, x, sizes):
    """repeat is linear: the tangent repeated, first given ``len(sizes)`` dims after its batch dims."""
    sizes = _tuple(sizes)
    batch = R.batch_shape(x_t, x)
    return F.repeat(R.align(x_t, x, len(sizes)), (1,) * len(batch) + sizes)


# ----- reshaping views ------------------------------------------------------------------------
reshape   = defop("reshape",   _reshape,   view=True,
                  x=lambda g, x_shape, shape: _reshape_back(g, x_shape, len(_tuple(shape))), jvp=_reshape_jvp)
view      = defop("view",      _view,      view=True,
                  x=lambda g, x_shape, shape: _reshape_back(g, x_shape, len(_tuple(shape))), jvp=_reshape_jvp)
flatten   = defop("flatten",   _flatten,   view=True,
                  x=lambda g, x_shape, start_dim, end_dim: _reshape_back(g, x_shape, len(_flat_shape(x_shape, start_dim, end_dim))), jvp=_reshape_jvp)
unflatten = defop("unflatten", _unflatten, view=True,
                  x=lambda g, x_shape, dim, sizes: _reshape_back(g, x_shape, len(x_shape) - 1 + len(sizes)), jvp=_reshape_jvp)
squeeze   = defop("squeeze",   _squeeze,   view=True,
                  x=lambda g, x_shape, dim: _reshape_back(g, x_shape, len(_squeezed_shape(x_shape, dim))), jvp=_reshape_jvp)
unsqueeze = defop("unsqueeze", _unsqueeze, view=True,
                  x=lambda g, x_shape: _reshape_back(g, x_shape, len(x_shape) + 1), jvp=_reshape_jvp)

# ----- broadcasting and reordering views --------------------------------------------------------
broadcast_to = defop("broadcast_to", _broadcast_to, view=True, x=lambda g: g,  # the engine sums g back to x's shape
                     jvp=lambda x_t, x_shape, out: R.expand_to(x_t, x_shape, out.shape))
expand       = defop("expand",       _expand,       view=True, x=lambda g: g,
                     jvp=lambda x_t, x_shape, out: R.expand_to(x_t, x_shape, out.shape))
permute      = defop("permute",      _permute,      view=True, x=_permute_grad,
                     jvp=lambda x_t, x_shape, dims: F.permute(x_t, R.from_end(dims, len(x_shape), x_t)))
transpose    = defop("transpose",    _transpose,    view=True,
                     x=lambda g, x_shape, dim0, dim1: F.transpose(g, *R.from_end((dim0, dim1), len(x_shape))),
                     jvp=lambda x_t, x_shape, dim0, dim1: F.transpose(x_t, *R.from_end((dim0, dim1), len(x_shape))))
movedim      = defop("movedim",      _movedim,      view=True, x=_movedim_grad,
                     jvp=lambda x_t, x_shape, source, destination: _movedim_grad(x_t, x_shape, destination, source))
diagonal     = defop("diagonal",     _diagonal,     view=True, x=_diagonal_grad,
                     jvp=lambda x_t, x_shape, offset, dim1, dim2: F.diagonal(x_t, offset, *R.from_end((dim1, dim2), len(x_shape))))

# ----- copies ---------------------------------------------------------------------------------
repeat = defop("repeat", _repeat, x=_repeat_grad, jvp=_repeat_jvp)
flip   = defop("flip",   _flip,   x=lambda g, x_shape, dims: F.flip(g, _flip_dims(dims, len(x_shape))),
               jvp=lambda x_t, x_shape, dims: F.flip(x_t, _flip_dims(dims, len(x_shape))))
roll   = defop("roll",   _roll,   x=_roll_grad,  # jvp: rolling back by -shifts is rolling forward
               jvp=lambda x_t, x_shape, shifts, dims: _roll_grad(x_t, x_shape, tuple(-s for s in _tuple(shifts)), dims))
diag   = defop("diag",   _diag,   x=_diag_grad,  # jvp: diag's transpose is diag of the other kind
               jvp=lambda x_t, out, diagonal: _diag_grad(x_t, out.shape, diagonal))
triu   = defop("triu",   _triu,   x=lambda g, diagonal: F.triu(g, diagonal), jvp=lambda x_t, diagonal: F.triu(x_t, diagonal))
tril   = defop("tril",   _tril,   x=lambda g, diagonal: F.tril(g, diagonal), jvp=lambda x_t, diagonal: F.tril(x_t, diagonal))
trace  = defop("trace",  _trace,  x=lambda g, x_shape: F.reshape(g, np.shape(g) + (1, 1)) * np.eye(*x_shape),
               jvp=lambda x_t: F.sum(F.diagonal(x_t, 0, -2, -1), -1))

view_as_real    = defop("view_as_real",    _view_as_real,    x=lambda g: F.view_as_complex(g), view=True,
                        jvp=lambda x_t: F.view_as_real(F.to_copy(x_t, np.complex128) if not R.is_complex(x_t) else x_t))
view_as_complex = defop("view_as_complex", _view_as_complex, x=lambda g: F.view_as_real(g), view=True,
                        jvp=lambda x_t: F.view_as_complex(x_t))


# ----- compositions -----------------------------------------------------------------------------
@composite
def view_as(x: Any, other: Any) -> Any:
    """``x`` viewed with ``other``'s shape (see ``view``)."""
    return view(x, np.shape(other))


@composite
def expand_as(x: Any, other: Any) -> Any:
    """``x`` expanded to ``other``'s shape (see ``expand``)."""
    return expand(x, np.shape(other))


@composite
def tile(x: Any, dims: Any) -> Any:
    """``x`` repeated ``dims[i]`` times along dim i; ``dims`` shorter than ``x.ndim`` is padded with 1s in front."""
    dims = _tuple(dims)
    return repeat(x, (1,) * (np.ndim(x) - len(dims)) + dims)


# ----- Tensor methods taking sizes or dims as varargs, as torch ----------------------------------
def _varargs(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``x.view(2, 3)`` and ``x.view((2, 3))`` alike: the sizes or dims as one tuple."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], tuple | list) else args


@tensor_method("reshape")
def _reshape_method(self: Any, *shape: Any) -> Any:
    """``self`` with a new shape, given as ints or one tuple (a view when possible)."""
    return reshape(self, _varargs(shape))


@tensor_method("view")
def _view_method(self: Any, *shape: Any) -> Any:
    """``self`` with a new shape sharing its memory, given as ints or one tuple (RuntimeError if that needs a copy)."""
    return view(self, _varargs(shape))


@tensor_method("permute")
def _permute_method(self: Any, *dims: Any) -> Any:
    """``self`` with its dims reordered, given as ints or one tuple."""
    return permute(self, _varargs(dims))


@tensor_method("expand")
def _expand_method(self: Any, *sizes: Any) -> Any:
    """``self`` broadcast to ``sizes`` (ints or one tuple; -1 keeps a size), a read-only view."""
    return expand(self, _varargs(sizes))


@tensor_method("repeat")
def _repeat_method(self: Any, *sizes: Any) -> Any:
    """``self`` tiled ``sizes[i]`` times along dim i (ints or one tuple)."""
    return repeat(self, _varargs(sizes))


@tensor_method("tile")
def _tile_method(self: Any, *dims: Any) -> Any:
    """``self`` tiled as ``tile`` does (ints or one tuple)."""
    return tile(self, _varargs(dims))


@tensor_method("flip")
def _flip_method(self: Any, *dims: Any) -> Any:
    """``self`` reversed along ``dims`` (ints or one tuple)."""
    return flip(self, _varargs(dims))

# ----- complex inputs: these rules only move, copy or sum values, so they hold as they are --------
allow_complex(reshape, view, flatten, unflatten, squeeze, unsqueeze, broadcast_to, expand, permute, transpose, movedim,
              diagonal, repeat, flip, roll, diag, triu, tril, trace, view_as_real, view_as_complex)
