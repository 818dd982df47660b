"""Views: tensors that share memory (and the version counter) with a base tensor.

A view remembers its base and a *view function* that recreates it from the base with funcgrad's
view ops, so the same function works on arrays, on Tensors and on gradients. An in-place operation
on a view rewrites the history of the base (``funcgrad.ops.inplace``), and every live view of that
base gets its history recreated from the new base (``refresh_views``).

Some views may not be written in place while it would be recorded, as in PyTorch (its CreationMeta):
views made under ``no_grad`` or ``inference_mode``, outputs of ops returning several views (``split``,
``unbind``) and views returned by a custom Function. Writing one raises at once; writing their base (or
another view of it) makes their history one that raises when a backward pass reaches it.
"""
from __future__ import annotations

import enum
import re
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.grad_mode import STATE
from funcgrad.core.graph import Node, Sink, next_sequence_nr

__all__ = ["CreationMeta", "mark_view", "refresh_views", "set_history", "check_inplace_on_view", "rebase_error"]

ViewFn = Callable[[Any], Any]

# np.may_share_memory without its __array_function__ dispatch (half its cost), for two plain arrays
_may_share_memory = getattr(np.may_share_memory, "_implementation", np.may_share_memory)


class CreationMeta(enum.Enum):
    """Why a view may not be written in place with grad mode on (a view without one has ``None``)."""

    NO_GRAD_MODE = "no_grad"
    INFERENCE_MODE = "inference"
    MULTI_OUTPUT_NODE = "multi_output"
    IN_CUSTOM_FUNCTION = "custom_function"


_AMBIGUOUS = (" Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
              "moving both the view and the inplace either both inside the {block} block (if you don't want the "
              "inplace to be tracked) or both outside (if you want the inplace to be tracked).")
_ADVICE = {
    CreationMeta.MULTI_OUTPUT_NODE: (" This view is the output of a function that returns multiple views. Such "
                                     "functions do not allow the output views to be modified inplace. You should "
                                     "replace the inplace operation by an out-of-place one."),
    CreationMeta.NO_GRAD_MODE: _AMBIGUOUS.format(block="no_grad"),
    CreationMeta.INFERENCE_MODE: _AMBIGUOUS.format(block="inference_mode"),
    CreationMeta.IN_CUSTOM_FUNCTION: (" This view was created inside a custom Function (or because an input was "
                                      "returned as-is) and the autograd logic to handle view+inplace would override "
                                      "the custom backward associated with the custom Function, leading to incorrect "
                                      "gradients. This behavior is forbidden. You can fix this by cloning the output "
                                      "of the custom Function."),
}


def mark_view(out: Any, source: Any, step: ViewFn, creation: CreationMeta | None = None) -> None:
    """Record that ``out`` = ``step(source)`` shares ``source``'s memory (when NumPy made a view).

    ``creation`` is what the op makes in grad mode (``MULTI_OUTPUT_NODE`` for ``split``); under
    ``no_grad``/``inference_mode`` the view is marked as made there. A view of a marked view keeps its mark.
    """
    data, source_data = out.data, source.data
    if not (_may_share_memory(data, source_data) if type(data) is type(source_data) is np.ndarray
            else np.may_share_memory(data, source_data)):
        return  # NumPy had to copy (e.g. reshape of a non-contiguous array): not a view
    if not STATE.grad_enabled:  # (inference mode turns grad mode off)
        creation = CreationMeta.INFERENCE_MODE if STATE.inference else CreationMeta.NO_GRAD_MODE
    src_extra = source._extra
    if src_extra is not None and src_extra.base is not None:
        base, parent = src_extra.base, src_extra.view_fn
        view_fn: ViewFn = lambda b: step(parent(b))  # noqa: E731
        inherited = src_extra.creation
        if inherited is not None and (creation is None or inherited is CreationMeta.INFERENCE_MODE):
            creation = inherited  # as torch's propagate_creation_meta
    else:
        base, view_fn = source, step
    extra = out._get_extra()
    extra.base = base
    extra.view_fn = view_fn
    extra.creation = creation
    out._version_counter = source._version_counter
    base_extra = base._get_extra()
    views = base_extra.views
    if views is None:
        views = base_extra.views = []
    elif len(views) >= 16 and not len(views) & (len(views) - 1):  # at 16, 32, 64...: let go of dead views
        views[:] = [ref for ref in views if ref() is not None]  # (a parameter viewed once per step: no growth)
    views.append(weakref.ref(out))


def refresh_views(base: Any, skip: Any = None) -> None:
    """Give every live view of ``base`` a history that starts at the base's current history (a view that
    may not be rebased gets one that raises PyTorch's error when a backward pass reaches it)."""
    extra = base._extra
    if extra is None or not extra.views:
        return
    alive = [v for v in (ref() for ref in extra.views) if v is not None]
    extra.views = [weakref.ref(v) for v in alive]
    if not base._requires_grad:
        return
    for view in alive:
        if view is skip:
            continue
        if view._extra.creation is not None:
            set_history(view, _InvalidView(rebase_error(view, True)), 0, True)
            continue
        fresh = view._extra.view_fn(base)
        set_history(view, fresh.grad_fn, fresh.output_nr, fresh._requires_grad)
    extra.views = [ref for ref in extra.views if ref() is not None]


def set_history(tensor: Any, node: Node | None, output_nr: int, requires_grad: bool) -> None:
    """Make output ``output_nr`` of ``node`` the new history of ``tensor`` (written in place, or a view of a
    tensor written in place). A ``retain_grad()`` moves with it, as torch: ``.grad`` is then the gradient
    of the tensor's current value. Hooks registered with ``register_hook`` stay on the old history."""
    old, old_nr = tensor.grad_fn, tensor.output_nr
    tensor.grad_fn, tensor.output_nr, tensor._requires_grad = node, output_nr, requires_grad
    if not tensor.retains_grad:
        return
    if old is not None and old._hooks is not None:
        ref = old._hooks.retains.get(old_nr)
        if ref is not None and ref() is tensor:
            del old._hooks.retains[old_nr]
    if node is None:
        tensor._extra.retains_grad = False
    else:
        node._hook_set().retains[output_nr] = weakref.ref(tensor)


def check_inplace_on_view(view: Any, args: tuple[Any, ...]) -> None:
    """Raise PyTorch's error if ``view`` (which has a creation mark) is about to be written in place where
    that would be recorded: grad mode is on and the view, its base or an argument requires grad."""
    if (view._requires_grad or view._extra.base._requires_grad
            or any(getattr(a, "_requires_grad", False) for a in args)):
        raise rebase_error(view, False)


def rebase_error(view: Any, indirect: bool) -> RuntimeError:
    """PyTorch's error (``handle_view_on_rebase``) for a marked view whose history would be rewritten:
    by writing it (``indirect=False``) or its base or another view of it (``indirect=True``)."""
    creation = view._extra.creation
    node = None if isinstance(view.grad_fn, _InvalidView) else view.grad_fn
    modified = "its base or another view of its base has been" if indirect else "is being"
    if creation in (CreationMeta.NO_GRAD_MODE, CreationMeta.INFERENCE_MODE) or node is None:
        prefix = ("A view was created in" if node is None else
                  f"Output {view.output_nr} of {_op_name(node)} is a view of a view which was created in")
        if creation is CreationMeta.INFERENCE_MODE:
            message = f"{prefix} inference mode and {modified} modified inplace in normal mode."
        else:  # a view without history was made under no_grad, whatever its mark says
            message = f"{prefix} no_grad mode and {modified} modified inplace with grad mode enabled."
    else:
        message = f"Output {view.output_nr} of {_op_name(node)} is a view and {modified} modified inplace."
    return RuntimeError(message + _ADVICE[creation])


def _op_name(node: Node) -> str:
    """``"SplitBackward0"`` -> ``"Split"``, as torch names the op in its view errors."""
    return re.sub(r"Backward\d*$", "", node.name())


class _InvalidView(Sink):
    """The history of a marked view after its base was written in place: reaching it in backward raises."""

    __slots__ = ("error",)
    _name = "Invalid"  # as torch's repr of such a view

    def __init__(self, error: RuntimeError) -> None:
        super().__init__(next_sequence_nr())
        self.error = error

    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> tuple[Any, ...]:
        """Raise the error the view's base rewrite deferred."""
        raise RuntimeError(str(self.error))
