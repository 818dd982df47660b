"""torch's functions that join tensors or build grids (``hstack``, ``vstack``, ``dstack``, ``column_stack``,
``meshgrid``) and ``complex``: compositions of ``cat``, ``reshape``, ``expand`` and ``view_as_complex``, so every
derivative order comes from the table. Shapes, dtypes and error texts are torch's. (NumPy's versions, with NumPy's
defaults, are in ``funcgrad.numpy``; these reuse its ``atleast_*d`` and ``meshgrid``.)
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops import numpy_functions
from funcgrad.ops.compositions import _data, _dtype, _ndim
from funcgrad.ops.kernels import torch_dtype_name
from funcgrad.ops.registry import composite

__all__ = ["hstack", "vstack", "dstack", "column_stack", "meshgrid", "complex"]


# ----- joining and grids ----------------------------------------------------------------------------------
def _joiner(name: str, shaped: Callable[[Any], Any], dim: Callable[[int], int], doc: str) -> Callable[..., Any]:
    """A composite ``name(tensors)``: each tensor ``shaped``, then all joined along ``dim(ndim of the first)``."""
    def join(tensors: Sequence[Any]) -> Any:
        if isinstance(tensors, Tensor | np.ndarray):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not Tensor")
        if not len(tensors):
            raise RuntimeError(f"{name} expects a non-empty TensorList")
        pieces = [shaped(t) for t in tensors]
        return F.cat(pieces, dim(_ndim(pieces[0])))
    join.__name__ = join.__qualname__ = name
    join.__doc__ = doc
    return composite(join)


hstack = _joiner("hstack", numpy_functions.atleast_1d, lambda n: 0 if n == 1 else 1,
                 "The tensors joined along dim 1 (dim 0 when they are 1-D; 0-D ones become 1-D), as torch.hstack.")
vstack = _joiner("vstack", numpy_functions.atleast_2d, lambda n: 0,
                 "The tensors joined along dim 0 after ``atleast_2d`` (vectors become rows), as torch.vstack.")
dstack = _joiner("dstack", numpy_functions.atleast_3d, lambda n: 2,
                 "The tensors joined along dim 2 after ``atleast_3d`` ((n,) -> (1, n, 1)), as torch.dstack.")
column_stack = _joiner("column_stack", lambda t: F.reshape(t, (-1, 1)) if _ndim(t) < 2 else t, lambda n: 1,
                       "The tensors joined along dim 1, 0-D and 1-D ones as columns, as torch.column_stack.")


@composite
def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[Any, ...]:
    """Coordinate grids from 0-D or 1-D tensors (given as arguments or one list): grid ``i`` spreads
    ``tensors[i]`` along dim ``i`` of the shape of their sizes; ``indexing="xy"`` swaps the first two dims. Each grid
    is an expanded view. Without ``indexing``, "ij" with torch's warning. As torch.meshgrid.

    Example:
        >>> import funcgrad as fg
        >>> [g.shape for g in fg.meshgrid(fg.arange(3.0), fg.arange(2.0), indexing="xy")]
        [(2, 3), (2, 3)]
    """
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("xy", "ij"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    for t in tensors:
        if _ndim(t) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    if len({_dtype(t) for t in tensors}) > 1:
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    return numpy_functions.meshgrid(*tensors, copy=False, indexing=indexing)


@composite
def complex(real: Any, imag: Any) -> Any:  # noqa: A001
    """The complex tensor ``real + imag * 1j`` (broadcast; float32 -> complex64, float64 -> complex128), exact for
    infinite parts; each part gets the real or imaginary part of the gradient. As torch.complex."""
    real_dtype, imag_dtype = _dtype(real), _dtype(imag)
    if real_dtype.kind != "f" or imag_dtype.kind != "f":
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{torch_dtype_name(real_dtype)} and {torch_dtype_name(imag_dtype)}")
    if real_dtype != imag_dtype:
        raise RuntimeError(f"Expected object of scalar type {torch_dtype_name(real_dtype)} but got scalar type "
                           f"{torch_dtype_name(imag_dtype)} for second argument")
    shape = np.broadcast_shapes(np.shape(_data(real)), np.shape(_data(imag)))
    return F.view_as_complex(F.stack([F.broadcast_to(real, shape), F.broadcast_to(imag, shape)], -1))
