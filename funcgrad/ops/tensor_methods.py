"""Tensor methods that PyTorch code calls on any tensor: memory layout (``contiguous``, ``stride``), dtype
conversions (``int``, ``long``, ``type_as``), factories sharing a tensor's dtype (``new_zeros``, ...), and the
predicates torch has as functions too (``is_tensor``, ``is_floating_point``, ...). Semantics as torch's.

Nothing here has a derivative of its own: conversions go through ``to`` (differentiable for float results,
as torch) and ``contiguous`` through ``clone``.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import funcgrad.ops as F
from funcgrad.core.tensor import Tensor
from funcgrad.ops.inplace import inplace
from funcgrad.ops.kernels import TORCH_DTYPE_NAMES, torch_dtype_name
from funcgrad.ops.registry import composite, tensor_method

__all__ = ["is_tensor", "is_complex", "is_floating_point", "is_nonzero", "numel", "device", "check_device"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve", "fpga", "maia", "xla",
                 "lazy", "vulkan", "mps", "meta", "hpu", "mtia", "privateuseone")


class device:  # noqa: N801  (torch's name)
    """A device, as ``torch.device("cpu")``: funcgrad computes with NumPy on the CPU, so every tensor's ``device``
    is the CPU and moving one elsewhere (``to("cuda")``) raises.

    Example:
        >>> import funcgrad as fg
        >>> fg.ones(2).device, fg.ones(2).to("cpu").device.type
        (device(type='cpu'), 'cpu')
    """

    def __init__(self, type: Any = "cpu", index: int | None = None) -> None:  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        name, _, number = str(type).partition(":")
        if name not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                               f"{type}")
        self.type = name
        self.index = int(number) if number else index

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self) -> int:
        return hash((self.type, self.index))


_CPU = device("cpu")


def _is_device(value: Any) -> bool:
    """Whether a positional argument of ``to`` names a device (a device, or a string that is no dtype's name)."""
    if isinstance(value, device) or type(value).__name__ == "device":
        return True
    if isinstance(value, str):
        try:
            np.dtype(value)
        except TypeError:
            return True
    return False


def check_device(value: Any) -> None:
    """Raise unless ``value`` (a ``device=`` argument) is None or the CPU, funcgrad's only device."""
    if value is not None and device(str(value)).type != "cpu":
        raise RuntimeError(f"funcgrad computes on the CPU only: device '{value}' is not available (as in a torch "
                           f"built without it)")


def _sizes(size: tuple[Any, ...]) -> tuple[int, ...]:
    """``new_zeros(2, 3)`` and ``new_zeros((2, 3))`` alike."""
    if len(size) == 1 and isinstance(size[0], tuple | list):
        size = tuple(size[0])
    return tuple(int(s) for s in size)


def _data(a: Any) -> Any:
    return a.data if isinstance(a, Tensor) else a


def _dtype(self: Tensor, dtype: Any) -> np.dtype:
    return self.data.dtype if dtype is None else np.dtype(dtype)


# ----- memory layout ----------------------------------------------------------------------------
@tensor_method("is_contiguous")
def _is_contiguous(self: Tensor) -> bool:
    """Whether the elements lie in memory in row-major order without gaps (dims of size 1 ignored, as torch)."""
    return bool(self.data.flags.c_contiguous)


@tensor_method("contiguous")
def _contiguous(self: Tensor) -> Tensor:
    """This tensor if it is contiguous, else a row-major copy (a ``clone``, differentiable), as torch.

    Example:
        >>> import funcgrad as fg
        >>> fg.ones(2, 3).t().contiguous().view(-1).shape
        (6,)
    """
    if self.data.flags.c_contiguous:
        return self
    return F.clone(self, memory_format="contiguous_format")


@tensor_method("stride")
def _stride(self: Tensor, dim: int | None = None) -> Any:
    """The step in elements between neighbours along each dim (0 along broadcast dims), or along ``dim``."""
    strides = tuple(s // self.data.itemsize for s in self.data.strides)
    if dim is None:
        return strides
    n = self.data.ndim
    if not -max(n, 1) <= dim < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, {max(n, 1) - 1}], "
                         f"but got {dim})")
    return strides[dim] if n else 1


@tensor_method("storage_offset")
def _storage_offset(self: Tensor) -> int:
    """How many elements into its memory block this tensor starts (nonzero for views such as ``x[1:]``)."""
    root = self.data
    while isinstance(root.base, np.ndarray):
        root = root.base
    low, _ = np.byte_bounds(root) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(root)
    return int((self.data.__array_interface__["data"][0] - low) // self.data.itemsize)


@tensor_method("data_ptr")
def _data_ptr(self: Tensor) -> int:
    """The address of the first element (equal for tensors starting at the same memory)."""
    return int(self.data.__array_interface__["data"][0])


@tensor_method("is_same_size")
def _is_same_size(self: Tensor, other: Any) -> bool:
    """Whether ``other`` has this tensor's shape."""
    return self.data.shape == np.shape(_data(other))


@tensor_method("sum_to_size")
def _sum_to_size(self: Tensor, *size: Any) -> Tensor:
    """This tensor summed down to ``size`` (ints or one tuple), which it must broadcast to, as torch."""
    shape = _sizes(size)
    if len(shape) > self.data.ndim or any(s not in (1, n) for s, n in zip(shape[::-1], self.data.shape[::-1])):
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.data.shape))}}}.")
    return F.sum_to(self, shape)


@tensor_method("element_size")
def _element_size(self: Tensor) -> int:
    """The size of one element in bytes."""
    return int(self.data.itemsize)


def _nbytes(self: Tensor) -> int:
    """The bytes the elements take (``numel() * element_size()``)."""
    return int(self.data.size * self.data.itemsize)


def _itemsize(self: Tensor) -> int:
    """The size of one element in bytes (``element_size()``)."""
    return int(self.data.itemsize)


tensor_method("nbytes")(property(_nbytes))  # type: ignore[arg-type]  # properties, as torch's
tensor_method("itemsize")(property(_itemsize))  # type: ignore[arg-type]


@tensor_method("nelement")
def _nelement(self: Tensor) -> int:
    """The number of elements (``numel``)."""
    return int(self.data.size)


# ----- dtype and device conversions ----------------------------------------------------------------------------
def _device(self: Tensor) -> device:
    """The CPU: where every funcgrad tensor lives."""
    return _CPU


tensor_method("device")(property(_device))  # type: ignore[arg-type]  # a property, as torch's


@tensor_method("to")
def _to(self: Tensor, *args: Any, dtype: Any = None, device: Any = None, non_blocking: bool = False,
        copy: bool = False, memory_format: Any = None) -> Tensor:
    """This tensor converted to a dtype (itself when it has it already, unless ``copy``); differentiable between
    floating dtypes. Takes torch's forms: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``
    (other's dtype) and the keywords; the only device is the CPU."""
    for arg in args:
        if isinstance(arg, Tensor):
            dtype = arg.data.dtype
        elif _is_device(arg):
            device = arg
        else:
            dtype = arg
    check_device(device)
    target = self.data.dtype if dtype is None else np.dtype(dtype)
    if target == self.data.dtype:
        return F.clone(self) if copy else self
    return F.to_copy(self, target)


@tensor_method("type")
def _type(self: Tensor, dtype: Any = None, non_blocking: bool = False) -> Any:
    """Without ``dtype``, torch's name of this tensor's type (``'torch.DoubleTensor'``); with one (a dtype or such a
    name), this tensor converted to it."""
    if dtype is None:
        return f"torch.{torch_dtype_name(self.data.dtype)}Tensor"
    if isinstance(dtype, str) and dtype.startswith("torch.") and dtype.endswith("Tensor"):
        names = {v: k for k, v in TORCH_DTYPE_NAMES.items()}
        name = names.get(dtype[len("torch."):-len("Tensor")])
        if name is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = name
    return self.to(dtype)


def _false(self: Tensor) -> bool:
    """False: funcgrad's tensors are dense, unquantized arrays in main memory."""
    return False


def _true(self: Tensor) -> bool:
    """True: funcgrad's tensors live in main memory."""
    return True


for _name in ("is_cuda", "is_sparse", "is_quantized", "is_meta", "is_mkldnn", "is_mps", "is_nested"):
    tensor_method(_name)(property(_false))  # type: ignore[arg-type]
tensor_method("is_cpu")(property(_true))  # type: ignore[arg-type]
tensor_method("is_pinned")(_false)
tensor_method("is_shared")(_false)


@tensor_method("pin_memory")
def _pin_memory(self: Tensor) -> Tensor:
    """This tensor itself (there is no device to copy to faster)."""
    return self


@tensor_method("share_memory_")
def _share_memory_(self: Tensor) -> Tensor:
    """This tensor itself (its memory is shared by reference already within the process)."""
    return self


@tensor_method("cuda")
def _cuda(self: Tensor, device: Any = None, non_blocking: bool = False) -> Tensor:
    """Raises: funcgrad has no CUDA device (as torch built without CUDA)."""
    raise RuntimeError("funcgrad computes on the CPU only: Torch not compiled with CUDA enabled")

@tensor_method("type_as")
def _type_as(self: Tensor, other: Any) -> Tensor:
    """This tensor converted to ``other``'s dtype (itself when it already has it)."""
    return self.to(np.result_type(other.data if isinstance(other, Tensor) else other))


def _conversion(name: str, dtype: type) -> Callable[[Tensor], Tensor]:
    """``Tensor.<name>()``: ``to(dtype)``, as torch's (an integer or bool result does not require grad)."""
    def convert(self: Tensor) -> Tensor:
        return self.to(dtype)
    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"``to({np.dtype(dtype).name})``, as torch's ``Tensor.{name}``."
    return convert


for _name, _target in {"int": np.int32, "long": np.int64, "bool": np.bool_, "short": np.int16, "char": np.int8,
                       "byte": np.uint8}.items():
    tensor_method(_name)(_conversion(_name, _target))


@tensor_method("cpu")
def _cpu(self: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor itself: funcgrad's tensors live in main memory (torch's ``cpu()`` of a CPU tensor)."""
    return self


@tensor_method("is_signed")
def _is_signed(self: Tensor) -> bool:
    """Whether the dtype can hold negative values (false for bool and unsigned integers)."""
    return self.data.dtype.kind in "ifc"


@tensor_method("ndimension")
def _ndimension(self: Tensor) -> int:
    """The number of dimensions (``dim()``)."""
    return int(self.data.ndim)


@tensor_method("half")
def _half(self: Tensor) -> Tensor:
    """``to(float16)``, as torch's ``Tensor.half`` (differentiable)."""
    return self.to(np.float16)


# ----- factories with this tensor's dtype -----------------------------------------------------------
@tensor_method("new_zeros")
def _new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor of zeros of ``size`` (ints or one tuple), with this tensor's dtype unless ``dtype`` is given."""
    check_device(device)
    return Tensor(np.zeros(_sizes(size), _dtype(self, dtype)), requires_grad)


@tensor_method("new_ones")
def _new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor of ones of ``size`` (ints or one tuple), with this tensor's dtype unless ``dtype`` is given."""
    check_device(device)
    return Tensor(np.ones(_sizes(size), _dtype(self, dtype)), requires_grad)


@tensor_method("new_empty")
def _new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new tensor of ``size`` with unspecified values (zeros here), with this tensor's dtype by default."""
    check_device(device)
    return Tensor(np.zeros(_sizes(size), _dtype(self, dtype)), requires_grad)


@tensor_method("new_full")
def _new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """A new tensor of ``size`` filled with ``fill_value``, with this tensor's dtype unless ``dtype`` is given."""
    check_device(device)
    return Tensor(np.full(_sizes((size,)), fill_value, _dtype(self, dtype)), requires_grad)


@tensor_method("new_tensor")
def _new_tensor(self: Tensor, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A new leaf holding a copy of ``data``, with this tensor's dtype unless ``dtype`` is given (torch's rule:
    not ``data``'s own dtype)."""
    check_device(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than "
                      "tensor.new_tensor(sourceTensor).", UserWarning, stacklevel=2)
        data = data.data
    return Tensor(np.array(data, dtype=_dtype(self, dtype), copy=True), requires_grad)


@tensor_method("float_power_")
def _float_power_(self: Tensor, exponent: Any) -> Tensor:
    """In-place ``float_power``: this tensor must be float64 (complex128 for a complex result), as torch."""
    complex_ = self.data.dtype.kind == "c" or np.iscomplexobj(_data(exponent))
    wanted = "ComplexDouble" if complex_ else "Double"
    if self.data.dtype != (np.complex128 if complex_ else np.float64):
        raise RuntimeError(f"the base given to float_power_ has dtype {torch_dtype_name(self.data.dtype)} but the "
                           f"operation's result requires dtype {wanted}")
    return inplace(self, F.float_power, exponent)


# ----- predicates and counts (functions as well as methods, as torch) ------------------------------
@composite
def is_tensor(obj: Any) -> bool:
    """Whether ``obj`` is a funcgrad Tensor (torch.is_tensor).

    Example:
        >>> import funcgrad as fg
        >>> fg.is_tensor(fg.ones(2)), fg.is_tensor([1.0])
        (True, False)
    """
    return isinstance(obj, Tensor)


def _check_tensor(name: str, x: Any) -> np.dtype:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(x).__name__}")
    return x.data.dtype


@composite
def is_complex(x: Any) -> bool:
    """Whether ``x``'s dtype is complex."""
    return _check_tensor("is_complex", x).kind == "c"


@composite
def is_floating_point(x: Any) -> bool:
    """Whether ``x``'s dtype is a real floating-point type."""
    return _check_tensor("is_floating_point", x).kind == "f"


@composite
def is_nonzero(x: Any) -> bool:
    """Whether the single element of ``x`` is nonzero (RuntimeError for more or fewer elements), as torch."""
    _check_tensor("is_nonzero", x)
    if x.data.size == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if x.data.size > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(x.data.item())


@composite
def numel(x: Any) -> int:
    """The number of elements of ``x``."""
    _check_tensor("numel", x)
    return int(x.data.size)
