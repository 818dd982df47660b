"""Full backward hooks of a module, as torch's ``BackwardHook``: the module's tensor inputs and outputs
pass through one identity node each side, whose gradients are the hooks' ``grad_input``/``grad_output``.

``grad_output`` is caught (and may be replaced by backward pre-hooks) before the output node runs;
``grad_input`` after the input node ran (a hook may replace it). With no input that requires grad,
the hooks run at the output node with ``grad_input`` all None, as torch does; otherwise a tensor input
that needs no gradient gets zeros, as torch reports it.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.autograd.function import Function
from funcgrad.core.grad_mode import is_grad_enabled
from funcgrad.core.tensor import Tensor

__all__ = ["BackwardHook"]

Hooks = dict[int, Callable[..., Any]]


class _Identity(Function):
    """Every tensor through unchanged; the one node whose gradients the hooks see."""

    @staticmethod
    def forward(ctx: Any, *tensors: Tensor) -> tuple[Tensor, ...]:
        return tuple(t.detach() for t in tensors)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        return grads


_Identity.__name__ = "BackwardHookFunction"


def _hooked(values: tuple[Any, ...]) -> list[int]:
    """Positions of the tensors that require grad (the others get None gradients)."""
    return [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]


def _through_identity(values: tuple[Any, ...], positions: list[int]) -> tuple[tuple[Any, ...], Any]:
    """``values`` with the tensors at ``positions`` replaced by the outputs of one identity node."""
    outs = _Identity.apply(*[values[i] for i in positions])
    outs = outs if isinstance(outs, tuple) else (outs,)
    replaced = list(values)
    for i, o in zip(positions, outs):
        replaced[i] = o
    return tuple(replaced), outs[0].grad_fn


def _spread(grads: Any, positions: list[int], n: int) -> tuple[Any, ...]:
    """One gradient per value: those of the hooked positions, None elsewhere."""
    out: list[Any] = [None] * n
    for i, g in zip(positions, grads):
        out[i] = g
    return tuple(out)


class BackwardHook:
    """One module call's full backward hooks (``module``'s hook dicts, read when the gradients arrive)."""

    def __init__(self, module: Any, hooks: Hooks, pre_hooks: Hooks) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_output: tuple[Any, ...] | None = None
        self.n_inputs = 0
        self.input_positions: list[int] = []
        self.constant_inputs: dict[int, Tensor] = {}

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        """Route the tensor inputs that require grad through the input identity node."""
        self.n_inputs = len(args)
        self.input_positions = _hooked(args)
        if not self.input_positions or not is_grad_enabled():
            return args
        # tensor inputs that need no gradient get zeros in grad_input, as torch reports them
        self.constant_inputs = {i: a for i, a in enumerate(args)
                                if isinstance(a, Tensor) and i not in self.input_positions}
        args, node = _through_identity(args, self.input_positions)
        node.register_hook(self._input_hook)
        return args

    def setup_output_hook(self, result: Any) -> Any:
        """Route the tensor outputs through the output identity node (a single tensor stays single)."""
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        positions = _hooked(outputs)
        if not positions or not is_grad_enabled():
            return result
        outputs, node = _through_identity(outputs, positions)
        n = len(outputs)

        def output_hook(grads: tuple[Any, ...]) -> Any:
            grad_output = _spread(grads, positions, n)
            for hook in list(self.pre_hooks.values()):
                replaced = hook(self.module, grad_output)
                if replaced is not None:
                    grad_output = _checked(replaced, grad_output, "backward pre hook")
            self.grad_output = grad_output
            if not self.input_positions:  # nothing to wait for: call the hooks now, grad_input all None
                for hook in list(self.hooks.values()):
                    if hook(self.module, (None,) * self.n_inputs, grad_output) is not None:
                        raise RuntimeError("Backward hook for Modules where no input requires gradient should "
                                           "always return None or None for all gradients.")
            return tuple(grad_output[i] for i in positions)

        node.register_prehook(output_hook)
        return outputs[0] if single else outputs

    def _input_hook(self, grad_inputs: tuple[Any, ...], _grad_outputs: tuple[Any, ...]) -> Any:
        grad_input = _spread(grad_inputs, self.input_positions, self.n_inputs)
        if self.constant_inputs:
            grad_input = tuple(Tensor(np.zeros(self.constant_inputs[i].shape, self.constant_inputs[i].dtype))
                               if i in self.constant_inputs else g for i, g in enumerate(grad_input))
        changed = False
        for hook in list(self.hooks.values()):
            replaced = hook(self.module, grad_input, self.grad_output)
            if replaced is not None:
                grad_input = _checked(replaced, grad_input, "backward hook")
                changed = True
        self.grad_output = None  # free the output gradients
        return tuple(grad_input[i] for i in self.input_positions) if changed else None


def _checked(new: Any, old: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    new = tuple(new) if isinstance(new, tuple | list) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(new)}, but "
                           f"expected {len(old)}" if what == "backward hook" else
                           f"Backward pre hook returned an invalid number of grad_output, got {len(new)}, but "
                           f"expected {len(old)}")
    return new
