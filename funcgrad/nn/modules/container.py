"""Containers, as torch's: ``Sequential``, ``ModuleList``, ``ModuleDict``, ``ParameterList``, ``ParameterDict``."""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from funcgrad.nn.modules.module import Module
from funcgrad.nn.parameter import Parameter

__all__ = ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]


def _index(i: int, n: int) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return i % n


def _delete_and_renumber(container: Module, idx: int | slice) -> None:
    """Delete the modules at ``idx`` and number the rest 0, 1, ... again (torch's ``del seq[i]``)."""
    keys = list(container._modules)
    for key in (keys[idx] if isinstance(idx, slice) else [keys[_index(idx, len(keys))]]):
        del container._modules[key]
    renumbered = OrderedDict((str(i), m) for i, m in enumerate(container._modules.values()))
    container._modules.clear()
    container._modules.update(renumbered)


class Sequential(Module):
    """Modules called one after another, each on the previous one's output.

    Example:
        >>> from funcgrad import nn
        >>> nn.Sequential(nn.Linear(2, 3), nn.ReLU())
        Sequential(
          (0): Linear(in_features=2, out_features=3, bias=True)
          (1): ReLU()
        )
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, module in args[0].items():
                self.add_module(name, module)
        else:
            for i, module in enumerate(args):
                self.add_module(str(i), module)

    def forward(self, input: Any) -> Any:
        """Run every module in order."""
        for module in self._modules.values():
            input = module(input)
        return input

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return Sequential(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_index(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, list(self._modules)[_index(idx, len(self))], module)  # in its place, as torch

    def __delitem__(self, idx: int | slice) -> None:
        _delete_and_renumber(self, idx)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> Sequential:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of modules, registered (so their parameters are the container's)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: int | slice) -> Any:
        if isinstance(idx, slice):
            return ModuleList(list(self._modules.values())[idx])
        return self._modules[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        self.add_module(str(_index(idx, len(self))), module)

    def __delitem__(self, idx: int | slice) -> None:
        _delete_and_renumber(self, idx)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())

    def append(self, module: Module) -> ModuleList:
        """Add ``module`` at the end."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of ``modules`` at the end."""
        for m in modules:
            self.append(m)
        return self


class ModuleDict(Module):
    """A dict of modules by name, registered."""

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> Iterable[str]:
        """The names."""
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        """The modules."""
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        """(name, module) pairs."""
        return self._modules.items()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) modules by name."""
        for key, module in (modules.items() if isinstance(modules, Mapping) else modules):
            self[key] = module


def _parameter_repr(p: Parameter) -> str:
    return f"Parameter containing: [{p.dtype} of size {'x'.join(map(str, p.shape))}]"


class ParameterList(Module):
    """A list of parameters, registered."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        for v in values or ():
            self.append(v)

    def __getitem__(self, idx: int) -> Parameter:
        return self._parameters[str(_index(idx, len(self)))]

    def __setitem__(self, idx: int, param: Any) -> None:
        self.register_parameter(str(_index(idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Parameter]:
        return iter(self._parameters.values())

    def append(self, value: Any) -> ParameterList:
        """Add a parameter at the end (a plain Tensor or array becomes a Parameter)."""
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): {_parameter_repr(p)}" for k, p in self._parameters.items())

    def __repr__(self) -> str:
        return f"ParameterList(  {self.extra_repr()})" if len(self) == 1 else super().__repr__()


class ParameterDict(Module):
    """A dict of parameters by name, registered."""

    def __init__(self, parameters: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        for k, v in (parameters or {}).items():
            self[k] = v

    def __getitem__(self, key: str) -> Parameter:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def keys(self) -> Iterable[str]:
        """The names."""
        return self._parameters.keys()

    def values(self) -> Iterable[Parameter]:
        """The parameters."""
        return self._parameters.values()

    def items(self) -> Iterable[tuple[str, Parameter]]:
        """(name, parameter) pairs."""
        return self._parameters.items()

    def extra_repr(self) -> str:
        return "\n".join(f"({k}): {_parameter_repr(p)}" for k, p in self._parameters.items())

    def __repr__(self) -> str:
        return f"ParameterDict(  {self.extra_repr()})" if len(self) == 1 else super().__repr__()


def _as_parameter(value: Any) -> Parameter:
    return value if isinstance(value, Parameter) else Parameter(value)
