"""Custom differentiable operations: ``Function``, its ``ctx`` and ``once_differentiable``.

``Function.apply`` runs the user's ``forward`` under ``no_grad``; when an input requires grad, the
ctx itself becomes the outputs' ``grad_fn`` (one ``<ClassName>Backward`` node class per Function).
Its ``apply`` calls the user's ``backward`` under the grad mode the engine chose, so a backward
written with funcgrad ops can be differentiated again. This module only keeps the ctx's books and
checks what ``backward`` returns; the engine reduces broadcast gradients and casts dtypes.
"""
from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.autograd.anomaly_mode import record_creation
from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import NO_VERSION, STATE, no_grad
from funcgrad.core.graph import NO_EDGE, Node, SavedOutput, edge_to, next_sequence_nr, pack_saved, saved_version
from funcgrad.core.tensor import Tensor
from funcgrad.core.views import CreationMeta, mark_view, rebase_error, set_history
from funcgrad.ops import stack, sum_to
from funcgrad.ops.inplace import rebase_view

__all__ = ["Function", "FunctionCtx", "once_differentiable"]



class FunctionCtx(Node):
    """The ``ctx`` handed to ``forward``/``setup_context`` and ``backward`` of a ``Function``.

    It is also the node recorded as the outputs' ``grad_fn``. Besides the methods below, any
    attribute may be set on it to pass non-tensor values from forward to backward.

    Attributes:
        needs_input_grad: one bool per argument of ``forward``: whether its gradient is needed.

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.function import Function
        >>> class Scale(Function):
        ...     @staticmethod
        ...     def forward(ctx, x, k):
        ...         ctx.k = k
        ...         return x * k
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         return g * ctx.k, None
        >>> y = Scale.apply(fg.tensor([1.0, 2.0], requires_grad=True), 3.0)
        >>> y.grad_fn.k, y.grad_fn.needs_input_grad
        (3.0, (True, False))
    """

    _function: ClassVar[type[Function]]

    def __init__(self) -> None:
        super().__init__()
        self.needs_input_grad: tuple[bool, ...] = ()
        self._to_save: tuple[Tensor | None, ...] = ()
        self._dirty: tuple[Tensor, ...] = ()
        self._non_differentiable: tuple[Tensor, ...] = ()
        self._materialize_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for ``backward``, where ``ctx.saved_tensors`` returns them (version-checked).

        Call it at most once, from ``forward`` or ``setup_context``. Inputs, outputs and ``None``
        may be saved; store any other value as an attribute of ``ctx`` instead.

        Raises:
            TypeError: an argument is neither a Tensor nor None.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"{self._function.__name__}: save_for_backward can only save tensors (or None), "
                                f"but argument {i} is of type {type(t).__name__}; store other values as "
                                f"attributes of ctx instead (e.g. ctx.value = value)")
        self._to_save = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``.

        Raises:
            RuntimeError: one was changed in place since it was saved, or a backward pass without
                ``retain_graph=True`` already freed them.
        """
        return tuple(self.unpack_saved(as_tensors=True))

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that ``forward`` modified in place; each must also be returned as an output.

        A dirty input keeps its identity: it gets this Function as its new history, and its version
        is bumped so earlier saves of it can tell it changed.
        """
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that are not differentiable: they do not require grad, and ``backward``
        receives zeros (or None, see ``set_materialize_grads``) for them."""
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With ``False``, ``backward`` receives ``None`` instead of zeros for outputs that got no gradient."""
        self._materialize_grads = bool(value)


def _alias(base: Any) -> Any:
    """The view function of an input returned as an output: the base itself."""
    return base


class BackwardFunction(FunctionCtx):
    """The base of the ``<ClassName>Backward`` node classes: runs the Function's ``backward``."""

    _is_tensor_input: tuple[bool, ...] = ()
    _output_meta: tuple[Any, ...] = ()

    def _wrap_outputs(self, inputs: tuple[Any, ...], output: Any, recording: bool) -> Any:
        """Check the dirty marks, give the tensor outputs this node as history, save what was asked."""
        outputs = output if isinstance(output, tuple) else (output,)
        input_ids = {id(a) for a in inputs if isinstance(a, Tensor)}
        self._check_dirty(input_ids, outputs, recording)
        dirty_ids = {id(t) for t in self._dirty}
        for t in self._dirty:
            if t._version_counter is not NO_VERSION:  # inference tensors count no versions
                t._version_counter[0] += 1
        if recording:
            self.sequence_nr = next_sequence_nr()  # after its edges, and after any node the forward made
            self._n_outputs = len(outputs)
        non_diff_ids = {id(t) for t in self._non_differentiable}
        seen: set[int] = set()
        results = []
        meta: list[Any] = []
        for i, out in enumerate(outputs):
            if not isinstance(out, Tensor):
                results.append(out)
                meta.append(None)  # type: ignore[arg-type]
                continue
            if id(out) in dirty_ids or (id(out) not in input_ids and id(out) not in seen):
                t = out
            else:  # an input returned as is (or an output returned twice): an alias, as torch's view_as
                t = Tensor._wrap(out.data)
                mark_view(t, out, _alias)
            seen.add(id(out))
            if recording and id(out) not in non_diff_ids and out.data.dtype.kind in "fc":
                set_history(t, self, i, True)
            if t._extra is not None and t._extra.base is not None and id(out) not in dirty_ids:
                t._extra.creation = CreationMeta.IN_CUSTOM_FUNCTION  # writing it in place would bypass backward
            results.append(t)
            meta.append((out.data.shape, out.data.dtype))
        self._output_meta = tuple(meta)
        self._save(recording)
        for t in self._dirty:
            if t._base is not None and t.grad_fn is self:
                rebase_view(t)  # the base's history goes through this Function, as torch's CopySlices
        return tuple(results) if isinstance(output, tuple) else results[0]

    def _check_dirty(self, input_ids: set[int], outputs: tuple[Any, ...], recording: bool) -> None:
        """Dirty tensors must be inputs and returned as outputs; with grad mode on, a leaf that requires grad
        (or a view of one) may not be dirty, nor may a view that PyTorch forbids writing in place."""
        name = self._function.__name__
        for t in self._dirty:
            if id(t) not in input_ids:
                raise RuntimeError(f"{name}: only input Tensors should be given to ctx.mark_dirty(); a Tensor of "
                                   f"shape {list(np.shape(t))} that is not an input was given. A new tensor needs no "
                                   "mark: just return it.")
            if all(o is not t for o in outputs):
                raise RuntimeError("Some elements marked as dirty during the forward method were not returned as "
                                   "output. The inputs that are modified inplace must all be outputs of the "
                                   f"Function ({name}): return them from forward.")
            base = t._base
            needs = t._requires_grad or (base is not None and base._requires_grad)
            if not STATE.grad_enabled or not (recording or needs):
                continue
            if (needs and t.grad_fn is None) or (base is not None and base._requires_grad and base.grad_fn is None):
                raise RuntimeError(f"{name}: a leaf Variable that requires grad (or a view of one) is being used in "
                                   "an in-place operation (ctx.mark_dirty). Call the Function on a clone(), or under "
                                   "`with funcgrad.no_grad():`.")
            if base is None:
                continue
            if t._extra.creation is not None:
                raise rebase_error(t, False)
            if len(outputs) > 1:
                raise RuntimeError("If your Function modifies inplace an input that is a view of another Tensor, your "
                                   "Function cannot return more than one Tensor. This is not supported by the current "
                                   "autograd engine. You should either make sure the input is not a view (using "
                                   ".clone() for example) or make your Function only return one Tensor (potentially "
                                   "splitting it into two Functions: one doing the inplace that returns a single "
                                   "Tensor and a second one that does the other operations).")

    def _save(self, recording: bool) -> None:
        """Store ``_to_save``; an output of this node is kept as a ``SavedOutput`` (no reference cycle)."""
        saved = [SavedOutput(t.data, t._version_counter, t.output_nr) if recording and t is not None
                 and t.grad_fn is self else t for t in self._to_save]
        self._saved = tuple(saved)
        self._versions = tuple([saved_version(v) for v in saved])
        self._to_save = ()
        pack_saved(self)

    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        """Call ``backward`` with one Tensor (or None) per output; return one gradient per input.

        In a batched pass (``is_grads_batched``: each gradient has a leading batch dimension) ``backward``,
        written for one gradient per output, is called once per batch element and the results stacked."""
        batch = self._batch_size(grad_outputs)
        if batch is not None:
            return self._apply_batched(grad_outputs, as_tensors, batch)
        grads: list[Any] = []
        for g, meta in zip(grad_outputs, self._output_meta):
            if meta is None:
                grads.append(None)  # a non-tensor output
            elif g is None:
                grads.append(Tensor._wrap(np.zeros(*meta)) if self._materialize_grads else None)
            else:
                grads.append(g if isinstance(g, Tensor) else Tensor._wrap(g))
        result = self._function.backward(self, *grads)
        return self._check(result if isinstance(result, tuple) else (result,), as_tensors)

    def _batch_size(self, grad_outputs: list[Any]) -> int | None:
        """The batch size when the gradients carry a leading batch dimension (one dimension more than their
        output: the engine gives an unbatched gradient its output's shape), else None."""
        for g, meta in zip(grad_outputs, self._output_meta):
            if g is not None and meta is not None:
                shape = g.data.shape if isinstance(g, Tensor) else np.shape(g)
                return shape[0] if len(shape) == len(meta[0]) + 1 else None
        return None

    def _apply_batched(self, grad_outputs: list[Any], as_tensors: bool, batch: int) -> list[Any]:
        """``apply`` per batch element, each result summed to its input's shape, stacked (zeros for a None among
        gradients of an input that others got)."""
        rows = [self.apply([None if g is None else g[b] for g in grad_outputs], as_tensors) for b in range(batch)]
        stacked: list[Any] = []
        for column, (_, _, shape, dtype) in zip(zip(*rows), self._edges):
            if all(g is None for g in column):
                stacked.append(None)
                continue
            stacked.append(stack([np.zeros(shape, dtype) if g is None else g if g.shape == shape else sum_to(g, shape)
                                  for g in column]))
        return stacked

    def _check(self, grads: tuple[Any, ...], as_tensors: bool) -> list[Any]:
        """Validate what ``backward`` returned; give the engine arrays, or Tensors if ``as_tensors``."""
        n = len(self._edges)
        if len(grads) > n and all(g is None for g in grads[n:]):
            grads = grads[:n]  # extra Nones are allowed, as torch
        if len(grads) != n:
            raise RuntimeError(f"function {self._name} returned an incorrect number of gradients (expected {n}, "
                               f"got {len(grads)}); backward must return one gradient (or None) per argument "
                               "of forward")
        checked: list[Any] = []
        for i, (g, (node, _, shape, dtype)) in enumerate(zip(grads, self._edges)):
            if g is None:
                checked.append(None)
                continue
            if not self._is_tensor_input[i]:
                raise RuntimeError(f"function {self._name} returned a gradient different than None at position "
                                   f"{i + 1}, but the corresponding forward input was not a Tensor; return None "
                                   "for it")
            if not isinstance(g, Tensor | np.ndarray):
                raise RuntimeError(f"function {self._name} returned a gradient of type {type(g).__name__} at "
                                   f"index {i}; expected a Tensor, a NumPy array or None")
            if node is None:
                checked.append(None)  # the input does not require grad
                continue
            if g.dtype.kind == "c" and dtype.kind != "c":  # as torch: never drop an imaginary part silently
                raise RuntimeError(f"Function {self._name} returned a complex gradient (dtype {g.dtype}) at index {i} "
                                   f"for a real input (dtype {dtype}); return the gradient w.r.t. the real input "
                                   "(for a real loss: the real part)")
            if g.shape != shape and not _reducible(g.shape, shape):
                raise RuntimeError(f"Function {self._name} returned an invalid gradient at index {i} - got "
                                   f"{list(g.shape)} but expected shape compatible with {list(shape)}; a gradient "
                                   "must have the input's shape or one it broadcasts to")
            if as_tensors:
                checked.append(g if isinstance(g, Tensor) else Tensor._wrap(g))
            else:
                checked.append(g.data if isinstance(g, Tensor) else g)
        return checked


def _reducible(grad_shape: tuple[int, ...], shape: tuple[int, ...]) -> bool:
    """True if ``shape`` broadcasts to ``grad_shape``, so the gradient can be summed back to ``shape``."""
    try:
        return np.broadcast_shapes(shape, grad_shape) == grad_shape
    except ValueError:
        return False


class _DelayedError(Node):
    """The history of results of a ``once_differentiable`` backward: differentiating them raises."""

    _name = "DelayedError"

    def __init__(self, edges: tuple[tuple[Any, ...], ...], n_outputs: int) -> None:
        super().__init__()
        self._edges = edges  # the Function's own edges, so that the error is on the path to every input it had
        self._n_outputs = n_outputs

    def apply(self, grad_outputs: list[Any], as_tensors: bool) -> list[Any]:
        """Raise: the backward that made these gradients was not recorded."""
        raise RuntimeError("trying to differentiate twice a function that was marked with @once_differentiable; "
                           "remove the decorator and write backward with funcgrad operations to allow it")


def once_differentiable(backward: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a ``Function.backward`` that is not differentiable itself (e.g. written with NumPy).

    The backward runs with grad mode off. Under ``create_graph=True`` its results get a history that
    raises when differentiated, instead of silently giving wrong higher derivatives.

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.function import Function, once_differentiable
        >>> class Cube(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x ** 3
        ...     @staticmethod
        ...     @once_differentiable
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return fg.tensor(3 * np.square(x.data) * g.data)
        >>> x = fg.tensor([1.0, 2.0], requires_grad=True)
        >>> Cube.apply(x).sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
    """

    @functools.wraps(backward)
    def wrapper(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        with no_grad():
            grads = backward(ctx, *grad_outputs)
        if not STATE.grad_enabled:
            return grads
        items = grads if isinstance(grads, tuple) else (grads,)
        node = _DelayedError(ctx._edges, len(items))
        marked = tuple(Tensor._from_node(np.asarray(_data(g)), node, i, [0])
                       if isinstance(g, Tensor | np.ndarray) else g for i, g in enumerate(items))
        return marked if isinstance(grads, tuple) else marked[0]

    return wrapper


def _data(value: Tensor | np.ndarray) -> np.ndarray:
    """The array of a Tensor, or the array itself."""
    return value.data if isinstance(value, Tensor) else value


class Function:
    """Base class of differentiable operations with a hand-written ``backward``.

    Subclass it with static methods ``forward(ctx, *args, **kwargs)`` (or ``forward(*args, **kwargs)``
    plus ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``, then call
    ``apply``. ``forward`` runs under ``no_grad`` on Tensors and returns a Tensor or a tuple (non-Tensor
    outputs are allowed). ``backward`` gets one gradient per output (Tensors, or None) and returns one
    per argument of forward: ``None`` for non-tensor arguments and for those that need no gradient.
    Written with funcgrad operations, it can be differentiated again (double backward).

    Example:
        >>> import funcgrad as fg
        >>> from funcgrad.autograd.function import Function
        >>> class Exp(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         out = fg.exp(x)
        ...         ctx.save_for_backward(out)
        ...         return out
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (out,) = ctx.saved_tensors
        ...         return g * out
        >>> x = fg.tensor([0.0, 1.0], requires_grad=True)
        >>> y = Exp.apply(x)
        >>> y.grad_fn.name()
        'ExpBackward'
        >>> y.sum().backward()
        >>> x.grad
        tensor([1.      , 2.718282])
    """

    _backward_cls: ClassVar[type[BackwardFunction]]
    _signature: ClassVar[inspect.Signature]
    _setup_style: ClassVar[bool]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = f"{cls.__name__}Backward"
        cls._backward_cls = type(name, (BackwardFunction,), {"_function": cls, "_name": name,
                                                             "__module__": cls.__module__})
        cls._setup_style = cls.setup_context is not Function.setup_context
        cls._signature = inspect.signature(cls.forward)

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """Compute the outputs from the inputs (Tensors and anything else); runs under ``no_grad``."""
        raise NotImplementedError("a Function subclass must implement the static method forward")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> None:
        """Optional: fill ``ctx`` from the inputs and the output of a ``forward`` that takes no ctx."""
        raise NotImplementedError("setup_context is optional; define it with a forward that takes no ctx")

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        """Map one gradient per output to one gradient (or None) per argument of forward."""
        raise NotImplementedError("a Function subclass must implement the static method backward")

    @staticmethod
    def jvp(ctx: FunctionCtx, *tangents: Any) -> Any:
        """Forward mode: map one tangent per argument of forward (zeros for a Tensor without one, None for
        non-tensor arguments) to one tangent (or None) per output; a batch of tangents (``jacfwd``) comes one
        direction at a time."""
        raise NotImplementedError("define the static method jvp to use this Function under forward-mode AD")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` and, when an input requires grad, record a ``<ClassName>Backward`` node.

        Every argument, positional or keyword (in the order of forward's parameters), is an input of
        the node: Tensors that require grad get an edge, anything else gets ``(None, 0)``.
        """
        if kwargs or cls._setup_style:
            args, kwargs = cls._bind(args, kwargs)
        inputs = args + tuple(kwargs.values())
        dual = forward_ad.function_tangents(inputs)
        if dual is not None and cls.jvp is Function.jvp:
            raise NotImplementedError(f"{cls.__name__}: an input carries a forward-mode tangent, so the Function needs "
                                      "a static method jvp(ctx, *tangents) returning one tangent per output")
        ctx = cls._backward_cls()
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in inputs)
        recording = STATE.grad_enabled and any(needs)
        ctx.needs_input_grad = needs if recording else (False,) * len(inputs)
        if recording:
            ctx._edges = tuple(edge_to(a) if need else NO_EDGE for a, need in zip(inputs, needs))
            ctx._is_tensor_input = tuple(isinstance(a, Tensor) for a in inputs)
        with no_grad(), forward_ad.primal_only():
            if cls._setup_style:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, inputs, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        result = ctx._wrap_outputs(inputs, output, recording)
        if dual is not None:
            level, tangents = dual
            batch = forward_ad.tangent_batch(tangents, inputs)
            output_tangents = forward_ad.function_jvp(cls.jvp, ctx, tangents, inputs,
                                                      len(result) if isinstance(result, tuple) else 1, batch)
            forward_ad.attach_function_tangents(cls.__name__, output_tangents, result, level, batch)
        if recording and DISPATCH.active:
            record_creation(ctx)
        return result

    @classmethod
    def _bind(cls, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """Arguments in the order of forward's parameters (defaults filled in for the setup_context style, as
        torch); keyword-only ones stay keywords."""
        lead = () if cls._setup_style else (None,)  # the ctx slot
        try:
            bound = cls._signature.bind(*lead, *args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{cls.__name__}.apply(): {e}") from None
        if cls._setup_style:
            bound.apply_defaults()
        return bound.args[len(lead):], bound.kwargs
