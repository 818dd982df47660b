"""Tensor factories: ``tensor``, ``zeros``, ``ones``, ``full``, ``empty``, ``eye``, ``arange``, ``linspace``,
``rand``, ``randn`` and their ``*_like`` forms, with NumPy's dtypes (``tensor(1.5)`` is float64). Each takes torch's
``device=`` keyword too, which must name the CPU (or be None)."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.effects import note_effect
from funcgrad.core.structured import Structured
from funcgrad.core.tensor import Tensor
from funcgrad.ops.tensor_methods import check_device

__all__ = ["tensor", "as_tensor", "from_numpy", "zeros", "ones", "full", "empty", "eye", "arange",
           "linspace", "rand", "randn", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
           "randn_like", "manual_seed", "Generator"]

Shape = Any


def _shape(size: tuple[Any, ...]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], tuple | list):
        return tuple(size[0])
    return tuple(size)


def _on_cpu(factory: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Let ``factory`` take torch's ``device=`` keyword: None or the CPU, funcgrad's only device."""
    @functools.wraps(factory)
    def made_on_cpu(*args: Any, device: Any = None, **kwargs: Any) -> Tensor:
        check_device(device)
        return factory(*args, **kwargs)
    return made_on_cpu


def _make(data: np.ndarray, requires_grad: bool) -> Tensor:
    return Tensor(data, requires_grad=requires_grad)


def _numeric(array: np.ndarray, factory: str) -> np.ndarray:
    """``array``, which NumPy built from the user's data: TypeError unless it holds numbers, as torch."""
    kind = array.dtype.kind
    if kind in "OUSV":
        odd = [type(v).__name__ for v in array.ravel() if not isinstance(v, bool | int | float | complex | np.number)]
        name = {"U": "str", "S": "bytes", "V": "void"}.get(kind) or (odd[0] if odd else "object")
        raise TypeError(f"{factory}(): invalid data type '{name}': a tensor holds booleans or numbers (integer, "
                        f"floating point or complex); convert the data first, e.g. float(value)")
    return array


@_on_cpu
def tensor(data: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a nested list, scalar, ndarray or Tensor).

    Example:
        >>> import funcgrad as fg
        >>> fg.tensor(1.5).dtype
        dtype('float64')
    """
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, Structured):  # an array of a pass or a recording, not an ndarray
        return _make(data.dense() if dtype is None else data.astype(dtype), requires_grad)
    return _make(_numeric(np.array(data, dtype=dtype, copy=True), "tensor"), requires_grad)


@_on_cpu
def as_tensor(data: Any, dtype: Any = None) -> Tensor:
    """A tensor sharing memory with ``data`` when it is already an ndarray of the right dtype."""
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype == np.dtype(dtype) else Tensor(data.data.astype(dtype))
    if isinstance(data, Structured):
        return Tensor(data if dtype is None or data.dtype == np.dtype(dtype) else data.astype(dtype))
    return Tensor(_numeric(np.asarray(data, dtype=dtype), "as_tensor"))


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array``."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return Tensor(array)


@_on_cpu
def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros (float64 unless ``dtype`` says otherwise)."""
    return _make(np.zeros(_shape(size), dtype=dtype or np.float64), requires_grad)


@_on_cpu
def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _make(np.ones(_shape(size), dtype=dtype or np.float64), requires_grad)


@_on_cpu
def full(size: Shape, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ``size`` filled with ``fill_value``."""
    return _make(np.full(tuple(size) if not isinstance(size, int) else (size,), fill_value, dtype=dtype),
                 requires_grad)


@_on_cpu
def empty(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor."""
    return _make(np.empty(_shape(size), dtype=dtype or np.float64), requires_grad)


@_on_cpu
def eye(n: int, m: int | None = None, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """The identity matrix (n x m)."""
    return _make(np.eye(n, m, dtype=dtype or np.float64), requires_grad)


@_on_cpu
def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Values from ``start`` to ``end`` (exclusive) by ``step``; ``arange(n)`` counts from 0."""
    if end is None:
        start, end = 0, start
    return _make(np.arange(start, end, step, dtype=dtype), requires_grad)


@_on_cpu
def linspace(start: float, end: float, steps: int, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _make(np.linspace(start, end, steps, dtype=dtype), requires_grad)


class Generator:
    """A seeded random source (NumPy's ``default_rng``), as ``torch.Generator``.

    Args:
        seed: the seed; ``manual_seed`` re-seeds.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def manual_seed(self, seed: int) -> Generator:
        """Re-seed and return self."""
        self.rng = np.random.default_rng(seed)
        return self


_default = Generator()


def manual_seed(seed: int) -> Generator:
    """Seed the default generator used by ``rand``/``randn`` and return it."""
    return _default.manual_seed(seed)


def _rng(generator: Generator | None, seed: int | None) -> np.random.Generator:
    if seed is not None:
        return np.random.default_rng(seed)
    note_effect("drew random numbers from a funcgrad Generator (they must differ at every call)")
    return (generator or _default).rng


@_on_cpu
def rand(*size: Any, dtype: Any = None, requires_grad: bool = False, generator: Generator | None = None,
         seed: int | None = None) -> Tensor:
    """Uniform samples in [0, 1), from ``generator``, a fresh ``seed``, or the default generator."""
    data = _rng(generator, seed).random(_shape(size))
    return _make(data.astype(dtype) if dtype is not None else data, requires_grad)


@_on_cpu
def randn(*size: Any, dtype: Any = None, requires_grad: bool = False, generator: Generator | None = None,
          seed: int | None = None) -> Tensor:
    """Standard normal samples, from ``generator``, a fresh ``seed``, or the default generator."""
    data = _rng(generator, seed).standard_normal(_shape(size))
    return _make(data.astype(dtype) if dtype is not None else data, requires_grad)


def _like(fn: Any, name: str) -> Any:
    def like(input: Any, dtype: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:  # noqa: A002
        arr = np.asarray(input.data if isinstance(input, Tensor) else input)
        return fn(*arr.shape, dtype=dtype or arr.dtype, requires_grad=requires_grad, **kwargs)

    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"``{fn.__name__}`` with the shape (and, by default, dtype) of ``input``."
    return like


zeros_like = _like(zeros, "zeros_like")
ones_like = _like(ones, "ones_like")
empty_like = _like(empty, "empty_like")
rand_like = _like(rand, "rand_like")
randn_like = _like(randn, "randn_like")


@_on_cpu
def full_like(input: Any, fill_value: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:  # noqa: A002
    """``full`` with the shape (and, by default, dtype) of ``input``."""
    arr = np.asarray(input.data if isinstance(input, Tensor) else input)
    return full(arr.shape, fill_value, dtype=dtype or arr.dtype, requires_grad=requires_grad)
