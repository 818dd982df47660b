"""JAX-style transforms (torch.func's names): each is a few lines over one reverse and one forward pass
(``funcgrad.functional._passes``); Jacobians in chunks or on an executor are ``funcgrad.functional._blocks``'s.
Argument handling (argnums, has_aux, pytrees, NumPy in and out) is ``funcgrad.functional._argnums.Call``'s
job, not this module's.
Transforms compose (``hessian`` is ``jacfwd(jacrev(f))``): called on Tensors that require grad or
carry tangents, a transform keeps its results attached so an outer transform can differentiate them (recording
its backward pass only for an outer reverse-mode transform: tangents flow through an unrecorded one).
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from typing import Any

import numpy as np

from funcgrad.core.tensor import Tensor
from funcgrad.functional._argnums import Argnums, Call
from funcgrad.functional._blocks import Products, blocked_jacobian, check_scale_options, require_real
from funcgrad.functional._core import basis, jacobian_blocks
from funcgrad.functional._passes import Traced, pull, push_pass, reverse_pass
from funcgrad.functional._pytree import tree_map

__all__ = ["grad", "value_and_grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]


def _dtype(tensors: Sequence[Tensor]) -> np.dtype:
    floating = [t.dtype for t in tensors if t.dtype.kind in "fc"]
    return np.result_type(*floating) if floating else np.dtype(np.float64)


def _own(primals: tuple[Any, ...]) -> tuple[Any, ...]:
    """Copies of the arrays among ``primals``, for a function returned to be called later (a pullback, a
    linearization): the caller may write into its arrays meanwhile, and the values it was given must stay."""
    return tree_map(lambda leaf: leaf.copy() if isinstance(leaf, np.ndarray) else leaf, primals)


def _check_scalar(call: Call, outs: Sequence[Tensor]) -> None:
    if call.out_spec is None or call.out_spec.kind is not None:
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was a tree {call.out_spec}; "
                        "use jacrev or vjp for structured outputs")
    out = outs[0].data
    if out.shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {out.shape}. "
                        "Use jacrev or vjp for non-scalar outputs (or sum the output)")
    if out.dtype.kind == "c":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {out.dtype}")
    if out.dtype.kind != "f":
        raise TypeError(f"grad requires real-valued outputs (a floating dtype), but got {out.dtype}")


# ----- transforms ------------------------------------------------------------------------------

def value_and_grad(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
    """``f``'s value and gradient in one pass, as JAX.

    Args:
        f: a function with a scalar (shape ``()``) floating output.
        argnums: the positional argument(s) to differentiate: an int, or a tuple of ints.
        has_aux: ``f`` returns ``(value, aux)``; aux is returned as it is, not differentiated.

    Returns:
        A function returning ``(value, grad)``, or ``((value, aux), grad)`` with ``has_aux``; ``grad``
        is shaped like the argument (a tuple of them for a tuple ``argnums``).

    Example:
        >>> import numpy as np
        >>> value, g = value_and_grad(lambda x: (x ** 2).sum())(np.array([1.0, 2.0]))
        >>> value, g
        (array(5.), array([2., 4.]))
    """
    @functools.wraps(f)
    def value_and_grad_f(*args: Any) -> Any:
        call, outs, grads, keep = _gradient(f, args, argnums, has_aux)
        return call.with_aux(call.outputs_tree(outs, keep), keep), call.inputs_tree(grads, keep)

    return value_and_grad_f


def _gradient(f: Callable[..., Any], args: tuple[Any, ...], argnums: Argnums,
              has_aux: bool) -> tuple[Call, list[Tensor], list[Tensor], bool]:
    """One reverse pass of a scalar ``f``: its call, outputs and gradients, and whether results stay attached."""
    call = Call(f, args, argnums, has_aux, "grad")
    xs, outs, traced = reverse_pass(call)
    _check_scalar(call, outs)
    return call, outs, pull(outs, xs, [None], traced.graph), bool(traced)


def grad(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The gradient of a scalar function, as JAX's ``grad``.

    Args:
        f: a function with a scalar (shape ``()``) floating output.
        argnums: the positional argument(s) to differentiate.
        has_aux: ``f`` returns ``(value, aux)``.

    Returns:
        A function returning the gradient (shaped like the argument(s)), or ``(grad, aux)``.

    Example:
        >>> import numpy as np
        >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
        (array([3., 4.]), array([1., 2.]))
    """
    @functools.wraps(f)
    def grad_f(*args: Any) -> Any:
        call, _, grads, keep = _gradient(f, args, argnums, has_aux)  # (the value is not exported)
        g = call.inputs_tree(grads, keep)
        return (g, call.aux_tree(keep)) if has_aux else g

    return grad_f


def grad_and_value(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
    """``value_and_grad`` in torch.func's order: ``(grad, value)``, or ``(grad, (value, aux))``.

    Example:
        >>> g, value = grad_and_value(lambda x: x ** 3)(2.0)
        >>> g, value
        (array(12.), array(8.))
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_and_value_f(*args: Any) -> Any:
        value, g = value_and_grad_f(*args)
        return g, value

    return grad_and_value_f


def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """Evaluate ``f`` and return its pullback, as JAX (and torch.func).

    Args:
        f: the function.
        *primals: its arguments (pytrees); all of them are differentiated.
        has_aux: ``f`` returns ``(output, aux)``.

    Returns:
        ``(output, pullback)`` or ``(output, pullback, aux)``. ``pullback(ct)`` takes a cotangent shaped
        like ``output`` and returns a tuple with one cotangent per primal; it may be called many times.

    Example:
        >>> import numpy as np
        >>> out, pullback = vjp(lambda x: x * 2.0, np.array([1.0, 2.0]))
        >>> pullback(np.array([1.0, 10.0]))
        (array([ 2., 20.]),)
    """
    call = Call(f, _own(primals), tuple(range(len(primals))), has_aux, "vjp")
    xs, outs, traced = reverse_pass(call)
    keep = bool(traced)

    def pullback(ct: Any) -> Any:
        assert call.out_spec is not None
        cts = call.match(ct, call.out_spec, outs, "cotangent")
        by = Traced(cts)  # the result is linear in the cotangents: traced when they are
        return call.inputs_tree(pull(outs, xs, cts, traced.graph or by.graph), keep or bool(by))

    out = call.outputs_tree(outs, keep)
    return (out, pullback, call.aux_tree(keep)) if has_aux else (out, pullback)


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple[Any, ...]:
    """``f``'s value and directional derivative ``J @ tangent`` in one forward-mode pass.

    Args:
        f: the function.
        primals: a tuple with ``f``'s arguments (pytrees).
        tangents: a tuple of the same structure and shapes: the direction.
        has_aux: ``f`` returns ``(output, aux)``.

    Returns:
        ``(output, output_tangent)`` (or with ``aux`` third); the tangent is shaped like the output.

    Example:
        >>> import numpy as np
        >>> jvp(lambda x: x ** 2, (np.array([1.0, 3.0]),), (np.array([1.0, 1.0]),))
        (array([1., 9.]), array([2., 6.]))
    """
    if not isinstance(primals, tuple | list) or not isinstance(tangents, tuple | list):
        raise TypeError("jvp: primals and tangents must be tuples (or lists), one entry per argument of f, "
                        f"got {type(primals).__name__} and {type(tangents).__name__}")
    call = Call(f, primals, tuple(range(len(primals))), has_aux, "jvp")
    outs, out_tangents, traced = push_pass(call, call.match(tuple(tangents), call.in_spec, call.inputs, "tangent"))
    keep = bool(traced)
    result = (call.outputs_tree(outs, keep), call.outputs_tree(out_tangents, keep))
    return (*result, call.aux_tree(keep)) if has_aux else result


_SCALE_ARGS = """
        chunk_size: seeds per batched pass (as ``torch.func.jacrev``'s): bounds memory; None for one pass.
        max_memory: bytes one pass may use: the chunk size comes from a probe of the first chunk.
        executor: a ``concurrent.futures.Executor`` (Dask: ``client.get_executor()``) that runs the chunks
            in parallel; each re-runs ``f``, which must then pickle for process-based executors.
        progress: show a progress bar over the seeds (tqdm if installed, else a line on stderr).
"""


def _with_scale_args(doc: str) -> str:
    return doc.replace("\n\n    Returns:", _SCALE_ARGS.rstrip() + "\n\n    Returns:", 1)


def jacrev(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *, chunk_size: int | None = None,
           max_memory: float | None = None, executor: Executor | None = None,
           progress: bool = False) -> Callable[..., Any]:
    """The Jacobian by reverse mode: one batched backward pass seeded with the identity.

    Args:
        f: the function (pytree in, pytree out).
        argnums: the positional argument(s) to differentiate.
        has_aux: ``f`` returns ``(output, aux)``.

    Returns:
        A function returning the Jacobian (or ``(jacobian, aux)``): nested as the output tree outside,
        the argnums tree inside; each leaf has shape ``out.shape + in.shape``.

    Example:
        >>> import numpy as np
        >>> jacrev(lambda x: x[:2] * 3.0)(np.array([1.0, 2.0, 3.0]))
        array([[3., 0., 0.],
               [0., 3., 0.]])
    """
    blocked = check_scale_options(chunk_size, max_memory, executor, "jacrev")

    @functools.wraps(f)
    def jacrev_f(*args: Any) -> Any:
        if blocked:
            return blocked_jacobian(Products(f, args, argnums, "reverse", "jacrev", has_aux=has_aux),
                                    chunk_size, max_memory, executor, progress)
        call = Call(f, args, argnums, has_aux, "jacrev")
        require_real("jacrev", call.inputs, "inputs")
        xs, outs, traced = reverse_pass(call)
        keep = bool(traced)
        require_real("jacrev", outs, "outputs")
        out_shapes = [out.shape for out in outs]
        seeds = basis(out_shapes, _dtype(outs), structured=True)
        grads = pull(outs, xs, seeds, traced.graph, batch=seeds[0].shape[:1])
        blocks = jacobian_blocks(grads, out_shapes, [x.shape for x in xs], "reverse")
        return call.with_aux(call.jacobian_tree(blocks, keep), keep)

    return jacrev_f


def jacfwd(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False, *, chunk_size: int | None = None,
           max_memory: float | None = None, executor: Executor | None = None,
           progress: bool = False) -> Callable[..., Any]:
    """The Jacobian by forward mode: one forward pass pushing a batch of identity tangents.

    Args:
        f: the function (pytree in, pytree out).
        argnums: the positional argument(s) to differentiate.
        has_aux: ``f`` returns ``(output, aux)``.

    Returns:
        A function returning the Jacobian (or ``(jacobian, aux)``), nested and shaped as ``jacrev``'s.

    Example:
        >>> import numpy as np
        >>> jacfwd(lambda x: {"sq": x ** 2})(np.array([1.0, 2.0]))
        {'sq': array([[2., 0.],
               [0., 4.]])}
    """
    blocked = check_scale_options(chunk_size, max_memory, executor, "jacfwd")

    @functools.wraps(f)
    def jacfwd_f(*args: Any) -> Any:
        if blocked:
            return blocked_jacobian(Products(f, args, argnums, "forward", "jacfwd", has_aux=has_aux),
                                    chunk_size, max_memory, executor, progress)
        call = Call(f, args, argnums, has_aux, "jacfwd")
        require_real("jacfwd", call.inputs, "inputs")
        in_shapes = [x.shape for x in call.inputs]
        outs, out_tangents, traced = push_pass(call, basis(in_shapes, _dtype(call.inputs), structured=True),
                                               structured=True)
        keep = bool(traced)
        require_real("jacfwd", outs, "outputs")
        blocks = jacobian_blocks(out_tangents, [out.shape for out in outs], in_shapes, "forward")
        return call.with_aux(call.jacobian_tree(blocks, keep), keep)

    return jacfwd_f


def hessian(f: Callable[..., Any], argnums: Argnums = 0, *, chunk_size: int | None = None,
            max_memory: float | None = None, executor: Executor | None = None,
            progress: bool = False) -> Callable[..., Any]:
    """The Hessian, forward-over-reverse: ``jacfwd(jacrev(f, argnums), argnums)``.

    Args:
        f: the function (pytree in, pytree out).
        argnums: the positional argument(s) to differentiate.

    Returns:
        A function returning the Hessian, of shape ``out.shape + in.shape + in.shape`` per leaf pair.

    Example:
        >>> import numpy as np
        >>> hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
        array([[ 6.,  0.],
               [ 0., 12.]])
    """
    if not check_scale_options(chunk_size, max_memory, executor, "hessian"):
        return jacfwd(jacrev(f, argnums), argnums)

    @functools.wraps(f)
    def hessian_f(*args: Any) -> Any:
        return blocked_jacobian(Products(f, args, argnums, "forward", "hessian", inner=jacrev),
                                chunk_size, max_memory, executor, progress)

    return hessian_f


for _transform in (jacrev, jacfwd, hessian):
    _transform.__doc__ = _with_scale_args(_transform.__doc__ or "")


def linearize(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """``f``'s value at ``primals`` and its Jacobian-vector product there, as a function.

    Each call of the returned function is one forward-mode pass through ``f`` (the linearization
    is not stored as a separate graph, so ``f`` runs again).

    Returns:
        ``(output, jvp_fn)``; ``jvp_fn(*tangents)`` returns the output tangent.

    Example:
        >>> import numpy as np
        >>> out, jvp_fn = linearize(lambda x: x ** 2, np.array([1.0, 3.0]))
        >>> jvp_fn(np.array([1.0, 0.0]))
        array([2., 0.])
    """
    primals = _own(primals)
    call = Call(f, primals, tuple(range(len(primals))), False, "linearize")
    outs = call(call.inputs)
    out = call.outputs_tree(outs, keep_graph=bool(Traced(outs)))  # attached only to what an outer trace follows

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(f, primals, tangents)[1]

    return out, jvp_fn
