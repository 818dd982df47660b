"""``Optimizer``: parameter groups, per-parameter state, state_dict and zero_grad, as ``torch.optim``.

Subclasses implement ``_update(group, param, grad, state)`` on plain arrays (the gradient with
``maximize`` already applied); the base class writes the new values into the parameters in place
under ``no_grad`` (bumping their versions, so a graph that saved a parameter notices the change).
A complex parameter is updated as the pairs of its real and imaginary parts (torch's ``view_as_real``), so
its state is real with a trailing dim of 2: Adam's ``g * g`` is then |Re g|^2 and |Im g|^2, not the complex g^2.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.backward import zero_grads
from funcgrad.core.grad_mode import enable_grad, no_grad
from funcgrad.core.tensor import Tensor

__all__ = ["Optimizer"]


class _Required:
    def __repr__(self) -> str:
        return "<required parameter>"


required = _Required()


def check_non_negative(value: float, what: str) -> None:
    """torch's argument check: ``Invalid <what>: <value>`` for a negative value."""
    if value < 0.0:
        raise ValueError(f"Invalid {what}: {value}")


def _as_real(z: np.ndarray) -> np.ndarray:
    """A complex array as real pairs: shape (*z.shape, 2), as ``torch.view_as_real``."""
    return np.stack([z.real, z.imag], axis=-1)


def _as_complex(pairs: np.ndarray) -> np.ndarray:
    """Real pairs (*shape, 2) back as a complex array of shape ``shape``."""
    return pairs[..., 0] + 1j * pairs[..., 1]


class Optimizer:
    """Base class of the optimizers.

    Args:
        params: an iterable of Tensors, or of dicts each holding ``params`` and per-group options.
        defaults: the options a group takes when it does not set them.
    """

    def __init__(self, params: Any, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        self.state: dict[Tensor, dict[str, Any]] = {}
        self.param_groups: list[dict[str, Any]] = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            "but got Tensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {key}: {group[key]}" for key in sorted(group) if key != "params")
        return "\n".join(lines) + "\n)"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters with its own options (the defaults fill the rest)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        params = param_group["params"]
        if isinstance(params, set):  # the per-parameter state is saved by position
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {type(p).__name__}")
            if p.grad_fn is not None:
                raise ValueError("can't optimize a non-leaf Tensor")
        if len({id(p) for p in params}) != len(params):
            raise ValueError("some parameters appear more than once in this parameter group")
        group = dict(param_group, params=params)
        for key, default in self.defaults.items():
            if default is required and key not in group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {key}")
            group.setdefault(key, default)
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if existing & {id(p) for p in params}:
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (default), or to zeros in place."""
        zero_grads((p for group in self.param_groups for p in group["params"]), set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update every parameter that has a gradient; ``closure`` (re-evaluating the loss) is called first."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    param, grad = p.data, p.grad.data
                    if group.get("maximize", False):
                        grad = -grad
                    state = self.state.setdefault(p, {})
                    if param.dtype.kind == "c":
                        new = _as_complex(self._update(group, _as_real(param), _as_real(grad), state))
                    else:
                        new = self._update(group, param, grad, state)
                    p.copy_(Tensor(new))
        return loss

    def _update(self, group: dict[str, Any], param: np.ndarray, grad: np.ndarray,
                state: dict[str, Any]) -> np.ndarray:
        """The parameter's new value (a new array), updating ``state`` in place."""
        raise NotImplementedError

    def state_dict(self) -> dict[str, Any]:
        """``{"state": {index: per-parameter state}, "param_groups": [options with "params" as indices]}``."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append(dict({k: v for k, v in group.items() if k != "params"}, params=ids))
        state = {index[id(p)]: copy.deepcopy(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore options and per-parameter state saved by ``state_dict`` (same group sizes)."""
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                                 "optimizer's group")
        self.state = {}
        for mine, saved in zip(self.param_groups, groups):
            for p, i in zip(mine["params"], saved["params"]):
                if i in state_dict["state"]:
                    self.state[p] = copy.deepcopy(state_dict["state"][i])
            mine.update({k: v for k, v in saved.items() if k != "params"})
