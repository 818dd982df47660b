"""``Module``: the base class of layers and models, with torch's registration, traversal, state_dict,
train/eval and hooks."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from funcgrad.core.backward import zero_grads
from funcgrad.core.grad_mode import is_grad_enabled, no_grad
from funcgrad.core.graph import RemovableHandle, add_hook
from funcgrad.core.tensor import Tensor
from funcgrad.nn.modules.hooks import BackwardHook
from funcgrad.nn.parameter import Buffer, Parameter

__all__ = ["Module"]


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


def _add_indent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    return lines[0] if len(lines) == 1 else "\n".join([lines[0]] + [" " * spaces + line for line in lines[1:]])


def _shape_text(shape: tuple[int, ...]) -> str:
    return f"({', '.join(str(n) for n in shape)})"


class Module:
    """Base class of all layers and models, as ``torch.nn.Module``.

    Assigning a ``Parameter``, a ``Module`` or (through ``register_buffer``) a buffer to an attribute
    registers it; ``parameters()``, ``state_dict()``, ``zero_grad()``, ``train()``/``eval()`` and ``to()``
    then reach it. Calling the module runs ``forward`` between its hooks.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad import nn
        >>> class Affine(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.scale = nn.Parameter(fg.ones(2))
        ...     def forward(self, x):
        ...         return x * self.scale
        >>> [name for name, _ in Affine().named_parameters()]
        ['scale']
    """

    training: bool
    _version = 1

    def __init__(self) -> None:
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        for kind in ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks",
                     "_old_backward_hooks"):
            d[kind] = OrderedDict()
        d["_with_kwargs"] = set()  # ids of forward (pre-)hooks that take kwargs

    forward: Callable[..., Any]

    # ----- registration ---------------------------------------------------------------------------
    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or None, a declared but absent one) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name(self, name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            f"(funcgrad.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a buffer (a Tensor that is state but not a parameter, e.g. running statistics)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name(self, name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                            f"(Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module under ``name``."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(self, name, "module", self._modules)
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params, modules, buffers = d.get("_parameters"), d.get("_modules"), d.get("_buffers")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _forget(self, name, "_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                                f"(funcgrad.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _forget(self, name, "_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{type(value).__name__}' as child module '{name}' "
                                f"(funcgrad.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer):
            _forget(self, name, "_buffers")
            self.register_buffer(name, Tensor(value.data), value.persistent)
        elif buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{type(value).__name__}' as buffer '{name}' (Tensor or None expected)")
            buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for kind in ("_parameters", "_buffers", "_modules"):
            store = d.get(kind)
            if store is not None and name in store:
                return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for kind in ("_parameters", "_buffers", "_modules"):
            store = self.__dict__[kind]
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))

    # ----- traversal ------------------------------------------------------------------------------
    def named_modules(self, memo: set[int] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every module below it, each once (pre-order)."""
        memo = set() if memo is None else memo
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every module below it."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct children, each once."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, kind: str, prefix: str, recurse: bool,
                       remove_duplicate: bool = True) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, kind).items():
                if value is None or (remove_duplicate and id(value) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(name, parameter) pairs, each shared parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters, each shared parameter once."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(name, buffer) pairs."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The module at dotted path ``target`` ("" is this module)."""
        module = self
        for item in target.split(".") if target else []:
            if item not in module._modules:
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = module._modules[item]
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path ``target``."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return module._parameters[name]

    # ----- modes and state --------------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        """Set training mode (Dropout drops, BatchNorm uses batch statistics) here and below."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self) -> Module:
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set ``requires_grad`` of every parameter."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to None (default), or to zeros in place."""
        zero_grads(self.parameters(), set_to_none)

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call ``fn`` on every child (recursively), then on this module; return self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def _apply(self, fn: Callable[[np.ndarray], np.ndarray]) -> Module:
        """Replace every parameter's and buffer's array by ``fn(array)`` (parameters stay the same objects)."""
        for m in self.modules():
            for p in m._parameters.values():
                if p is not None:
                    p.data = fn(p.data)
                    if p.grad is not None:
                        p.grad = Tensor(fn(p.grad.data))
            for b in m._buffers.values():
                if b is not None:
                    b.data = fn(b.data)
        return self

    def to(self, dtype: Any) -> Module:
        """Convert the floating parameters and buffers to ``dtype``, in place; return self."""
        target = np.dtype(dtype)
        if target.kind not in "fc":
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype="
                            f"{target}")
        return self._apply(lambda a: a.astype(target) if a.dtype.kind in "fc" and a.dtype != target else a)

    def double(self) -> Module:
        """``to(float64)``."""
        return self.to(np.float64)

    def float(self) -> Module:
        """``to(float32)``."""
        return self.to(np.float32)

    def state_dict(self, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> OrderedDict[str, Any]:
        """Parameters and persistent buffers by dotted name (detached, sharing memory unless ``keep_vars``)."""
        out: OrderedDict[str, Any] = OrderedDict() if destination is None else destination
        for module_prefix, module in self.named_modules(prefix=prefix.rstrip("."), remove_duplicate=False):
            lead = module_prefix + "." if module_prefix else ""
            for name, p in module._parameters.items():
                if p is not None:
                    out[lead + name] = p if keep_vars else p.detach()
            for name, b in module._buffers.items():
                if b is not None and name not in module._non_persistent_buffers_set:
                    out[lead + name] = b if keep_vars else b.detach()
        return out

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> _IncompatibleKeys:
        """Copy values (Tensors or arrays) into the parameters and persistent buffers, by name.

        With ``strict`` (default), missing or unexpected keys are an error, as are shape mismatches always;
        the module is unchanged when it raises. Returns the missing and unexpected keys.
        """
        own = self.state_dict(keep_vars=True)
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:
            if missing:
                errors.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        values = {}
        for key, target in own.items():
            if key not in state_dict:
                continue
            value = state_dict[key]
            array = np.asarray(value.data if isinstance(value, Tensor) else value)
            if array.shape != target.shape:
                errors.append(f"size mismatch for {key}: copying a param with shape {_shape_text(array.shape)} "
                              f"from checkpoint, the shape in current model is {_shape_text(target.shape)}.")
            values[key] = array
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(errors))
        with no_grad():
            for key, array in values.items():
                target = own[key]
                if assign:
                    target.data = array.astype(target.dtype, copy=True)
                else:
                    target.copy_(Tensor(array))
        return _IncompatibleKeys(missing, unexpected)

    # ----- hooks ------------------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``) before
        ``forward``; a non-None result replaces the args (a single value is wrapped in a tuple), or with
        ``with_kwargs`` must be ``(args, kwargs)``."""
        return self._add_hook(self._forward_pre_hooks, hook, prepend, with_kwargs)

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                              with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) after ``forward``;
        a non-None result replaces the output."""
        return self._add_hook(self._forward_hooks, hook, prepend, with_kwargs)

    def register_full_backward_pre_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients of the outputs are known; a non-None result
        replaces ``grad_output``."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend, False)

    def register_full_backward_hook(self, hook: Callable[..., Any], prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the inputs are known: one
        entry per positional argument (None for non-tensors and tensors that do not require grad); a
        non-None result replaces ``grad_input``."""
        if self._old_backward_hooks:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        return self._add_hook(self._backward_hooks, hook, prepend, False)

    def register_backward_hook(self, hook: Callable[..., Any]) -> RemovableHandle:
        """The older hook: ``hook(module, grad_input, grad_output)`` run on the ``grad_fn`` of the output's
        last operation (its gradients, whatever that operation is); prefer ``register_full_backward_hook``."""
        if self._backward_hooks:
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        return add_hook(self._old_backward_hooks, hook)

    def _add_hook(self, hooks: OrderedDict[int, Any], hook: Callable[..., Any], prepend: bool,
                  with_kwargs: bool) -> RemovableHandle:
        handle = add_hook(hooks, hook)
        if prepend:
            hooks.move_to_end(handle._key, last=False)
        if with_kwargs:
            self._with_kwargs.add(handle._key)
        return handle

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not (self._forward_pre_hooks or self._forward_hooks or self._backward_hooks or self._backward_pre_hooks
                or self._old_backward_hooks):
            return self.forward(*args, **kwargs)
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in self._with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        backward_hook = None
        if (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled():
            backward_hook = BackwardHook(self, self._backward_hooks, self._backward_pre_hooks)
            args = backward_hook.setup_input_hook(args)
        result = self.forward(*args, **kwargs)
        for key, hook in list(self._forward_hooks.items()):
            replaced = hook(self, args, kwargs, result) if key in self._with_kwargs else hook(self, args, result)
            if replaced is not None:
                result = replaced
        if backward_hook is not None:
            result = backward_hook.setup_output_hook(result)
        if self._old_backward_hooks:
            self._attach_old_backward_hooks(result)
        return result

    def _attach_old_backward_hooks(self, result: Any) -> None:
        var = result
        while not isinstance(var, Tensor):
            var = next(iter(var.values())) if isinstance(var, dict) else var[0]
        if var.grad_fn is None:
            return
        for hook in self._old_backward_hooks.values():
            var.grad_fn.register_hook(lambda grad_in, grad_out, hook=hook: hook(self, grad_in, grad_out))

    # ----- printing ---------------------------------------------------------------------------------
    def extra_repr(self) -> str:
        """The text inside this module's parentheses in ``repr`` (layers override it)."""
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            lines.append(f"({name}): " + _add_indent(repr(module), 2))
        if not self._modules:
            return f"{self._get_name()}({self.extra_repr()})"
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


def _check_name(module: Module, name: str, what: str, store: dict[str, Any]) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{what} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{what} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{what} name can\'t be empty string ""')
    if name not in store and name in module.__dict__:
        raise KeyError(f"attribute '{name}' already exists")


def _forget(module: Module, name: str, kept: str) -> None:
    """Drop ``name`` from the other registries and the instance dict before it is registered anew in ``kept``,
    where it keeps its place, as torch's (a Sequential's layer replaced with setattr stays where it runs)."""
    for kind in ("_parameters", "_buffers", "_modules"):
        if kind != kept:
            module.__dict__[kind].pop(name, None)
    module.__dict__.pop(name, None)
    if kept != "_buffers":
        module._non_persistent_buffers_set.discard(name)
