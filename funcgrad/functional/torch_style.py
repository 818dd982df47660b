"""``torch.autograd.functional``: vjp, jvp, jacobian, hessian, hvp, vhp on Tensors or tuples of Tensors.

Signatures, defaults, result nesting and ``strict`` errors follow PyTorch. The passes themselves are
``funcgrad.functional._core``'s: ``vectorize=True`` is one batched backward (or forward) pass seeded
with the identity, ``jvp`` is true forward mode and ``hvp`` is forward-over-reverse. Deliberate
difference: forward-mode Jacobians also support ``create_graph=True`` (PyTorch raises).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any, Literal, NoReturn

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.core.grad_mode import enable_grad, no_grad
from funcgrad.core.graph import next_sequence_nr
from funcgrad.core.tangents import current, tangent_of, tangents_of
from funcgrad.core.tensor import Tensor
from funcgrad.functional._blocks import Products, check_scale_options, gradient, jacobian_matrix, matrix_blocks
from funcgrad.functional._core import basis, grad_or_none, jacobian_blocks, tangent, zeros_for
from funcgrad.functional._passes import depends_beyond, inside_transform, tracked
from funcgrad.ops import stack

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

Tensors = Tensor | tuple[Tensor, ...]
Strategy = Literal["reverse-mode", "forward-mode", "auto"]

# kind -> (what was found, when it is not allowed); {0}, {1} are the indices given to _strict_check
_STRICT = {
    "outputs": ("Output {0} of the user-provided function does not require gradients: the outputs must be "
                "computed in a differentiable manner from the input", ""),
    "input": ("The output of the user-provided function is independent of input {0}", ""),
    "element": ("Output {0} of the user-provided function is independent of input {1}", ""),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with "
                 "respect to input {0} is independent of the input (the function must be twice differentiable "
                 "with a jacobian that depends on the inputs, which a linear function violates)", ""),
    "hessian": ("The hessian of the user-provided function is independent of input {0}", ""),
    "jacobian_graph": ("The jacobian of the user-provided function is independent of input {0}",
                       " when create_graph=True"),
    "hessian_graph": ("The hessian of the user-provided function is independent of input {0}",
                      " when create_graph=True"),
}


def _strict_check(kind: str, index: int | tuple[int, int]) -> NoReturn:
    """Raise the ``strict=True`` error of ``kind`` for input/output ``index``, from one template."""
    found, when = _STRICT[kind]
    raise RuntimeError(found.format(*(index if isinstance(index, tuple) else (index,)))
                       + f". This is not allowed in strict mode{when}.")


# ----- argument conventions --------------------------------------------------------------------

def _as_tuple(value: Any, arg_name: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    """``(was a tuple, the Tensors as a tuple)``, with PyTorch's type error."""
    is_tuple = isinstance(value, tuple | list)
    values = tuple(value) if is_tuple else (value,)
    for i, el in enumerate(values):
        if not isinstance(el, Tensor):
            where = f"the value at index {i}" if is_tuple else f"the given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of Tensors "
                            f"but {where} has type {type(el)}.")
    return is_tuple, values


def _unpack(result: Sequence[Any], is_tuple: bool) -> Any:
    return tuple(result) if is_tuple else result[0]


def _refuse_traced(inputs: Sequence[Tensor], create_graph: bool) -> None:
    """Raise, as torch, for a call without ``create_graph`` on inputs a ``funcgrad.func`` transform traces: the
    result would be detached from them, and the transform would differentiate a constant (zeros)."""
    if not create_graph and inside_transform() and any(x.requires_grad or tangents_of(x) for x in inputs):
        raise _traced_error()


def _traced_error() -> RuntimeError:
    return RuntimeError("funcgrad.functional's functions detach their result unless create_graph=True, so inside "
                        "a funcgrad.func transform (grad, jacrev, jacfwd, hessian, vjp, jvp...) the transform would "
                        "see a constant and give zeros. Pass create_graph=True, or use the funcgrad.func "
                        "transforms themselves (e.g. func.hessian instead of functional.hessian).")


def _prepare(inputs: tuple[Tensor, ...], create_graph: bool) -> tuple[Tensor, ...]:
    """New Tensor objects requiring grad: differentiable aliases of inputs (history and tangents kept) when
    ``create_graph``, else detached."""
    _refuse_traced(inputs, create_graph)
    return tuple(tracked(x) if create_graph else x.detach().requires_grad_() for x in inputs)


def _finish(tensors: Sequence[Tensor], create_graph: bool) -> tuple[Tensor, ...]:
    return tuple(tensors) if create_graph else tuple(t.detach() for t in tensors)


def _vector(v: Any, refs: tuple[Tensor, ...], fn_name: str, of: str, create_graph: bool) -> tuple[Tensor, ...]:
    """Check ``v`` (one Tensor per ref, same sizes); None only for a single one-element ref. With ``create_graph``
    a ``v`` that requires grad keeps its graph (the product is differentiable in ``v`` too, as torch's)."""
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {of} is a single Tensor with a single "
                               "element.")
        return (Tensor(np.ones(refs[0].shape, refs[0].dtype)),)
    _, vs = _as_tuple(v, "v", fn_name)
    if len(vs) != len(refs):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got {len(vs)}.")
    for i, (el, ref) in enumerate(zip(vs, refs)):
        if el.shape != ref.shape:
            prefix = f"Entry {i} in " if len(refs) > 1 else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be {ref.shape} but got {el.shape}.")
    _refuse_traced(vs, create_graph)
    return tuple(el if create_graph and el.requires_grad else el.detach() for el in vs)


def _call(func: Callable[..., Any], inputs: tuple[Tensor, ...], fn_name: str, strict: bool,
          create_graph: bool) -> tuple[bool, tuple[Tensor, ...]]:
    """Run ``func`` in grad mode; its outputs as a tuple, each required to need grad when ``strict``. Without
    ``create_graph`` inside a transform, outputs depending on a value the transform traces (that ``func`` closes
    over) raise, as traced inputs do (``_refuse_traced``)."""
    since = next_sequence_nr()
    with enable_grad():
        is_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    if not create_graph and inside_transform() and depends_beyond(outputs, inputs, since):
        raise _traced_error()
    for i, out in enumerate(outputs):
        if strict and not out.requires_grad:
            _strict_check("outputs", i)
    return is_tuple, outputs


def _fill(grads: Sequence[Tensor | None], refs: Sequence[Tensor], strict: bool, create_graph: bool,
          stage: Literal["jacobian", "hessian"]) -> tuple[Tensor, ...]:
    """Zeros for the None gradients, or the strict errors (``input``/``hessian``, ``*_graph``)."""
    for i, g in enumerate(grads):
        if strict and g is None:
            _strict_check("input" if stage == "jacobian" else "hessian", i)
        if strict and create_graph and g is not None and not g.requires_grad:
            _strict_check(f"{stage}_graph", i)
    return tuple(g if g is not None else zeros_for(ref) for g, ref in zip(grads, refs))


# ----- vjp / jvp -------------------------------------------------------------------------------

def vjp(func: Callable[..., Any], inputs: Tensors, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensors, Tensors]:
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``, as ``torch.autograd.functional.vjp``.

    Args:
        func: takes Tensors, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: one Tensor per output, of its shape (may be None for a single one-element output).
        create_graph: make the result differentiable (w.r.t. inputs that require grad).
        strict: raise when an output does not require grad or an input does not affect the outputs.

    Returns:
        ``(func_output, vjp)``; ``vjp`` is structured and shaped like ``inputs``.

    Example:
        >>> import funcgrad as fg
        >>> vjp(lambda x: 2 * x, fg.tensor([1.0, 2.0]), fg.tensor([1.0, 1.0]))
        (tensor([2., 4.]), tensor([2., 2.]))
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
    xs = _prepare(inputs, create_graph)
    is_outputs_tuple, outputs = _call(func, xs, "vjp", strict, create_graph)
    vs = _vector(v, outputs, "vjp", "user-provided function returns", create_graph)
    with enable_grad():
        grads = _fill(grad_or_none(outputs, xs, vs, create_graph), xs, strict, create_graph, "jacobian")
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(grads, create_graph), is_inputs_tuple))


def _forward(func: Callable[..., Any], xs: tuple[Tensor, ...], tangents: Sequence[Any], fn_name: str,
             strict: bool, create_graph: bool,
             structured: bool = False) -> tuple[bool, tuple[Tensor, ...], tuple[Tensor, ...]]:
    """One forward-mode pass: ``(is_outputs_tuple, outputs, output tangents)``, zeros where none flowed; the
    tangents are recorded for reverse mode only with ``create_graph`` (else ``_finish`` detaches them). With
    ``structured`` and without ``create_graph``, a batch of tangents is returned as the pass left it (it may
    be structured: ``jacobian_blocks`` makes it dense as it cuts it)."""
    with forward_ad.dual_level(record_tangents=create_graph):
        # xs are the caller's own Tensors (_prepare): no dual views
        is_tuple, outputs = _call(func, tuple(forward_ad.set_tangent(x, t) for x, t in zip(xs, tangents)),
                                  fn_name, strict, create_graph)
        if structured and not create_graph:  # the outputs are detached by _finish: their tangent is dropped
            pairs = [forward_ad.UnpackedDualTensor(out, tangent_of(out, current())) for out in outputs]
        else:
            pairs = [forward_ad.unpack_dual(out) for out in outputs]
    batch = tuple(tangents[0].shape[:1]) if tangents[0].ndim > xs[0].ndim else ()
    return (is_tuple, tuple(p.primal for p in pairs),
            tuple(p.tangent if p.tangent is not None else zeros_for(out, batch) for p, out in zip(pairs, outputs)))


def jvp(func: Callable[..., Any], inputs: Tensors, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensors, Tensors]:
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``, by forward mode.

    Args:
        func: takes Tensors, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: one Tensor per input, of its shape (may be None for a single one-element input).
        create_graph: make the result differentiable (w.r.t. inputs that require grad).
        strict: raise when an output does not require grad.

    Returns:
        ``(func_output, jvp)``; ``jvp`` is structured and shaped like the output.

    Example:
        >>> import funcgrad as fg
        >>> jvp(lambda x: x ** 2, fg.tensor([1.0, 3.0]), fg.tensor([1.0, 1.0]))
        (tensor([1., 9.]), tensor([2., 6.]))
    """
    _, inputs = _as_tuple(inputs, "inputs", "jvp")
    xs = _prepare(inputs, create_graph)
    vs = _vector(v, xs, "jvp", "input to the user-provided function", create_graph)
    with enable_grad() if create_graph or strict else no_grad():  # strict checks outputs' requires_grad
        is_outputs_tuple, outputs, tangents = _forward(func, xs, vs, "jvp", strict, create_graph)
    if strict:
        _strict_jvp(outputs, xs, tangents, create_graph)
    return (_unpack(_finish(outputs, create_graph), is_outputs_tuple),
            _unpack(_finish(tangents, create_graph), is_outputs_tuple))


def _strict_jvp(outputs: tuple[Tensor, ...], xs: tuple[Tensor, ...], tangents: tuple[Tensor, ...],
                create_graph: bool) -> None:
    """``jvp``'s ``strict`` errors, as torch's: an input the outputs do not use (found by a backward pass), and
    with ``create_graph`` an output tangent that does not depend on the inputs (the function is linear)."""
    with enable_grad():
        reached = grad_or_none(outputs, xs, [zeros_for(out) for out in outputs], create_graph=False)
    for i, g in enumerate(reached):
        if g is None:
            _strict_check("input", i)
    for i, t in enumerate(tangents):
        if create_graph and not t.requires_grad:
            _strict_check("jacobian_graph", i)


# ----- jacobian / hessian ----------------------------------------------------------------------

def _jacobian_rows(outputs: tuple[Tensor, ...], xs: tuple[Tensor, ...], create_graph: bool, strict: bool,
                   vectorize: bool) -> list[Tensor]:
    """Reverse mode: per input, the ``(total output size, *input.shape)`` stack of the Jacobian's rows."""
    if vectorize:
        seeds = basis([out.shape for out in outputs], outputs[0].dtype, structured=not create_graph)
        batch = seeds[0].shape[:1]
        grads = grad_or_none(outputs, xs, seeds, create_graph, batched=True)
        return [g if g is not None else zeros_for(x, batch) for g, x in zip(grads, xs)]
    rows: list[list[Tensor]] = [[] for _ in xs]
    for i, out in enumerate(outputs):
        for seed in basis([out.shape], out.dtype)[0]:  # one backward pass per output element
            for j, (g, x) in enumerate(zip(grad_or_none([out], xs, [seed], create_graph), xs)):
                if strict and g is None:
                    _strict_check("element", (i, j))
                if strict and create_graph and g is not None and not g.requires_grad:
                    _strict_check("jacobian_graph", j)
                rows[j].append(g if g is not None else zeros_for(x))
    return [_stacked(r, x) for r, x in zip(rows, xs)]


def _stacked(rows: list[Tensor], x: Tensor) -> Tensor:
    """The rows of one input's Jacobian as one Tensor (a single row is reshaped, not copied)."""
    if len(rows) == 1:
        return rows[0].reshape((1, *x.shape))
    return stack(rows) if rows else zeros_for(x, (0,))


def jacobian(func: Callable[..., Any], inputs: Tensors, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: Strategy = "reverse-mode", *, chunk_size: int | None = None,
             max_memory: float | None = None, executor: Executor | None = None, progress: bool = False) -> Any:
    """The Jacobian of ``func`` at ``inputs``, as ``torch.autograd.functional.jacobian``.

    Args:
        func: takes Tensors, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: make the result differentiable (w.r.t. inputs that require grad).
        strict: raise when an output does not depend on an input (not with ``vectorize=True``).
        vectorize: one batched pass seeded with the identity instead of one pass per output element.
        strategy: ``"reverse-mode"`` (rows), ``"forward-mode"`` (columns; needs ``vectorize=True``) or
            ``"auto"``: forward mode when there are fewer input than output elements and ``vectorize=True``.
        chunk_size: seeds per batched pass (needs ``vectorize=True``): bounds memory.
        max_memory: bytes one pass may use: the chunk size comes from a probe of the first chunk.
        executor: a ``concurrent.futures.Executor`` running the chunks in parallel (each re-runs ``func``,
            which must pickle for process-based executors; Dask: ``client.get_executor()``).
        progress: show a progress bar over the seeds.

    Returns:
        A Tensor of shape ``output.shape + input.shape``; a tuple of them over inputs (tuple inputs) or
        over outputs (tuple outputs); a tuple (over outputs) of tuples (over inputs) when both are tuples.

    Example:
        >>> import funcgrad as fg
        >>> jacobian(lambda x: x ** 2, fg.tensor([1.0, 2.0]))
        tensor([[2., 0.],
                [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode", "auto"):
        raise ValueError('Expected strategy to be either "forward-mode", "reverse-mode" or "auto". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    if strategy == "auto":
        strategy = _pick_strategy(func, inputs, vectorize)
    if check_scale_options(chunk_size, max_memory, executor, "jacobian"):
        return _blocked(func, inputs, create_graph, vectorize, strategy, None, chunk_size, max_memory, executor,
                        progress)
    if strict and (vectorize or strategy == "forward-mode"):
        option, other = (("`vectorized=True`", "`vectorize=False`") if vectorize
                         else ('`strategy="forward-mode"`', '`strategy="reverse-mode"`'))
        raise RuntimeError(f"torch.autograd.functional.jacobian: `strict=True` and {option} are not supported "
                           f"together. Please either set `strict=False` or {other}.")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                                  "implemented for `vectorize=True`.")
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    xs = _prepare(inputs, create_graph)
    in_shapes = [x.shape for x in xs]
    with enable_grad() if create_graph else no_grad():
        if strategy == "forward-mode":
            tangents = [Tensor._wrap(t) for t in basis(in_shapes, xs[0].dtype, structured=not create_graph)]
            is_outputs_tuple, outputs, batched = _forward(func, xs, tangents, "jacobian", strict, create_graph,
                                                             structured=True)
            mode: Literal["reverse", "forward"] = "forward"
        else:
            is_outputs_tuple, outputs = _call(func, xs, "jacobian", strict, create_graph)
            with enable_grad():
                batched = tuple(_jacobian_rows(outputs, xs, create_graph, strict, vectorize))
            mode = "reverse"
        blocks = jacobian_blocks(batched, [out.shape for out in outputs], in_shapes, mode)
    return _unpack([_unpack(_finish(row, create_graph), is_inputs_tuple) for row in blocks], is_outputs_tuple)


def hessian(func: Callable[..., Any], inputs: Tensors, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: Strategy = "reverse-mode", *,
            chunk_size: int | None = None, max_memory: float | None = None, executor: Executor | None = None,
            progress: bool = False) -> Any:
    """The Hessian of a scalar function, as ``torch.autograd.functional.hessian``: the Jacobian of its gradient.

    Args:
        func: takes Tensors, returns a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: make the result differentiable (w.r.t. inputs that require grad).
        strict: raise when the gradient does not depend on an input.
        vectorize: compute the outer Jacobian in one batched pass.
        outer_jacobian_strategy: ``"reverse-mode"`` (reverse-over-reverse) or ``"forward-mode"``
            (forward-over-reverse; needs ``vectorize=True``).
        chunk_size, max_memory, executor, progress: as for ``jacobian``; the chunks are batches of
            Hessian-vector products (forward over reverse).

    Returns:
        A Tensor of shape ``input.shape + input.shape``, or for tuple inputs a tuple of tuples:
        ``result[i][j]`` has shape ``inputs[i].shape + inputs[j].shape``.

    Example:
        >>> import funcgrad as fg
        >>> hessian(lambda x: (x ** 3).sum(), fg.tensor([1.0, 2.0]))
        tensor([[ 6.,  0.],
                [ 0., 12.]])
    """
    is_inputs_tuple, _ = _as_tuple(inputs, "inputs", "hessian")
    if check_scale_options(chunk_size, max_memory, executor, "hessian"):
        return _blocked(func, inputs, create_graph, vectorize, "forward-mode", gradient, chunk_size, max_memory,
                        executor, progress)

    def gradient_of_func(*xs: Tensor) -> Any:
        if outer_jacobian_strategy == "forward-mode":  # keep the duals: _prepare would detach them
            xs = tuple(x if x.requires_grad else x.requires_grad_() for x in xs)
        _, grads = _gradient(func, xs, "hessian", strict, create_graph, unused="jacobian",
                             record=create_graph or outer_jacobian_strategy == "reverse-mode")
        return grads if is_inputs_tuple else grads[0]

    return jacobian(gradient_of_func, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                    strategy=outer_jacobian_strategy)


def _pick_strategy(func: Callable[..., Any], inputs: Tensors, vectorize: bool) -> Strategy:
    """``strategy="auto"``: forward mode for fewer input than output elements (it needs ``vectorize``)."""
    if not vectorize:
        return "reverse-mode"
    _, xs = _as_tuple(inputs, "inputs", "jacobian")
    with no_grad():
        _, outputs = _as_tuple(func(*xs), "outputs of the user-provided function", "jacobian")
    n_in, n_out = sum(x.numel() for x in xs), sum(out.numel() for out in outputs)
    return "forward-mode" if n_in < n_out else "reverse-mode"


def _blocked(func: Callable[..., Any], inputs: Tensors, create_graph: bool, vectorize: bool, strategy: Strategy,
             inner: Callable[..., Any] | None, chunk_size: int | None, max_memory: float | None,
             executor: Executor | None, progress: bool) -> Any:
    """``jacobian``/``hessian`` in chunks of seeds: torch's nesting, Tensors without a graph."""
    if not vectorize:
        raise ValueError("chunk_size, max_memory and executor split the batched pass of vectorize=True; "
                         "pass vectorize=True")
    if create_graph:
        raise ValueError("chunk_size, max_memory and executor compute the Jacobian without a graph; they cannot "
                         "be used with create_graph=True")
    is_inputs_tuple, xs = _as_tuple(inputs, "inputs", "hessian" if inner else "jacobian")
    _refuse_traced(xs, create_graph)
    mode: Literal["reverse", "forward"] = "forward" if strategy == "forward-mode" else "reverse"
    products = Products(func, tuple(x.detach().data for x in xs), tuple(range(len(xs))), mode,
                        "hessian" if inner else "jacobian", inner=inner)
    matrix, out_shapes, in_shapes = jacobian_matrix(products, chunk_size, max_memory, executor, progress)
    assert products.call is not None
    is_outputs_tuple = is_inputs_tuple if inner else products.call.out_spec.kind is not None  # type: ignore[union-attr]
    blocks = matrix_blocks(matrix, out_shapes, in_shapes)
    return _unpack([_unpack([Tensor(b) for b in row], is_inputs_tuple) for row in blocks], is_outputs_tuple)


def _single_scalar(func: Callable[..., Any], xs: tuple[Tensor, ...], fn_name: str, strict: bool,
                   create_graph: bool) -> Tensor:
    """``func(*xs)``, checked to be a single one-element Tensor, as a 0-d Tensor."""
    is_tuple, outputs = _call(func, xs, fn_name, strict, create_graph)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                           "element")
    return outputs[0] if outputs[0].ndim == 0 else outputs[0].reshape(())  # (an op less in both passes)


# ----- hvp / vhp -------------------------------------------------------------------------------

def _gradient(func: Callable[..., Any], xs: tuple[Tensor, ...], fn_name: str, strict: bool, create_graph: bool,
              unused: Literal["input", "jacobian"] = "input",
              record: bool = True) -> tuple[Tensor, tuple[Tensor, ...]]:
    """``(output, gradient)`` of a scalar function, the gradient recorded for reverse-mode differentiation
    if ``record`` (forward mode needs only its tangents, which flow without); with ``strict``, an input
    the output does not use raises the ``unused`` error (torch's hvp says "input", its hessian, whose
    inner Jacobian holds zeros there, "jacobian")."""
    out = _single_scalar(func, xs, fn_name, strict, create_graph)
    with enable_grad():
        grads = grad_or_none([out], xs, [None], create_graph=record)
    for i, g in enumerate(grads):
        if strict and g is None:
            _strict_check(unused, i)
        elif strict and not (g.requires_grad if record else tangent(g) is not None):  # type: ignore[arg-type]
            _strict_check("jacobian", i)  # the gradient does not depend on the inputs
    return out, tuple(g if g is not None else zeros_for(x) for g, x in zip(grads, xs))


def vhp(func: Callable[..., Any], inputs: Tensors, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Tensors]:
    """The vector-Hessian product ``v^T H`` of a scalar function, by reverse-over-reverse.

    Args:
        func: takes Tensors, returns a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        v: one Tensor per input, of its shape (may be None for a single one-element input).
        create_graph: make the result differentiable (w.r.t. inputs that require grad).
        strict: raise when the gradient or the Hessian does not depend on an input.

    Returns:
        ``(func_output, vhp)``; ``vhp`` is structured and shaped like ``inputs``.

    Example:
        >>> import funcgrad as fg
        >>> vhp(lambda x: (x ** 3).sum(), fg.tensor([1.0, 2.0]), fg.tensor([1.0, 1.0]))
        (tensor(9.), tensor([ 6., 12.]))
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vhp")
    xs = _prepare(inputs, create_graph)
    vs = _vector(v, xs, "vhp", "input to the user-provided function", create_graph)
    out, grads = _gradient(func, xs, "vhp", strict, create_graph)
    with enable_grad() if create_graph else no_grad():
        result = _fill(grad_or_none(grads, xs, vs, create_graph), xs, strict, create_graph, "hessian")
    return _finish([out], create_graph)[0], _unpack(_finish(result, create_graph), is_inputs_tuple)


def hvp(func: Callable[..., Any], inputs: Tensors, v: Any = None, create_graph: bool = False,
        strict: bool = False) -> tuple[Tensor, Tensors]:
    """The Hessian-vector product ``H v`` of a scalar function, by forward-over-reverse.

    Args:
        func: takes Tensors, returns a Tensor with a single element.
        inputs: a Tensor or a tuple of Tensors.
        v: one Tensor per input, of its shape (may be None for a single one-element input).
        create_graph: make the result differentiable (w.r.t. inputs that require grad).
        strict: raise when the gradient or the Hessian does not depend on an input.

    Returns:
        ``(func_output, hvp)``; ``hvp`` is structured and shaped like ``inputs``.

    Example:
        >>> import funcgrad as fg
        >>> hvp(lambda x: (x ** 3).sum(), fg.tensor([1.0, 2.0]), fg.tensor([1.0, 1.0]))
        (tensor(9.), tensor([ 6., 12.]))
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hvp")
    xs = _prepare(inputs, create_graph)
    vs = _vector(v, xs, "hvp", "input to the user-provided function", create_graph)
    with forward_ad.dual_level(record_tangents=create_graph):
        # xs are this call's own Tensors (_prepare): they carry the tangents themselves, no dual views needed
        out, grads = _gradient(func, tuple(forward_ad.set_tangent(x, t) for x, t in zip(xs, vs)), "hvp", strict,
                               create_graph, record=create_graph)
        result = _fill([tangent(g) for g in grads], xs, strict, create_graph, "hessian")
    return _finish([out], create_graph)[0], _unpack(_finish(result, create_graph), is_inputs_tuple)
