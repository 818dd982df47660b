"""JAX-style transforms (torch.func's names): each is a few lines over one reverse and one forward pass.

``_reverse`` runs the function with its differentiated leaves tracked for reverse mode and
``_pull`` sends cotangents (one, or a batch of them in one pass) back; ``_push`` runs it once under
forward mode with a tangent (or a batch of tangents) per leaf. Argument handling (argnums, has_aux,
pytrees, NumPy in and out) is ``funcgrad.func._argnums.Call``'s job, not this module's.
Transforms compose (``hessian`` is ``jacfwd(jacrev(f))``): called on Tensors that require grad or
carry tangents, a transform keeps the graph so an outer transform can differentiate its result.
"""
from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import forward_ad
from funcgrad.core.grad_mode import enable_grad
from funcgrad.core.tensor import Tensor
from funcgrad.func._argnums import Argnums, Call
from funcgrad.functional._core import basis, grad_or_none, jacobian_blocks, tangent, zeros_for
from funcgrad.ops import alias

__all__ = ["grad", "value_and_grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "linearize"]


# ----- the two passes ---------------------------------------------------------------------------

def _tracked(x: Tensor) -> Tensor:
    """A new Tensor object for ``x`` that requires grad, keeping ``x``'s history and tangent."""
    y = alias(x)
    return y if y.requires_grad else y.requires_grad_()


def _reverse(call: Call) -> tuple[list[Tensor], list[Tensor], bool]:
    """Run ``call`` for reverse mode: ``(inputs, outputs, keep_graph)``.

    The graph is kept (``create_graph``) when an outer transform traces the inputs: they require
    grad or carry a tangent.
    """
    keep = any(x.requires_grad or tangent(x) is not None for x in call.inputs)
    with enable_grad():
        xs = [_tracked(x) for x in call.inputs]
        return xs, call(xs), keep


def _pull(outs: Sequence[Tensor], xs: Sequence[Tensor], cts: Sequence[Any], keep: bool,
          batch: tuple[int, ...] = ()) -> list[Tensor]:
    """The input cotangents for output cotangents ``cts`` (each with leading ``batch`` dims if any)."""
    with enable_grad():
        grads = grad_or_none(outs, xs, cts, create_graph=keep, batched=bool(batch))
    return [g if g is not None else zeros_for(x, batch) for g, x in zip(grads, xs)]


def _push(call: Call, tangents: Sequence[Any]) -> tuple[list[Tensor], list[Tensor], bool]:
    """Run ``call`` under forward mode: ``(outputs, output tangents, keep_graph)``.

    ``tangents`` has one entry per input, of its shape or with one leading batch dimension.
    """
    keep = any(x.requires_grad for x in call.inputs)
    batch = tuple(np.shape(tangents[0])[:1]) if np.ndim(tangents[0]) > call.inputs[0].ndim else ()
    with forward_ad.dual_level():
        outs = call([forward_ad.make_dual(x, t) for x, t in zip(call.inputs, tangents)])
        pairs = [forward_ad.unpack_dual(out) for out in outs]
    return ([p.primal for p in pairs],
            [p.tangent if p.tangent is not None else zeros_for(out, batch) for p, out in zip(pairs, outs)], keep)


def _dtype(tensors: Sequence[Tensor]) -> np.dtype:
    floating = [t.dtype for t in tensors if t.dtype.kind in "fc"]
    return np.result_type(*floating) if floating else np.dtype(np.float64)


def _check_scalar(call: Call, outs: Sequence[Tensor]) -> None:
    if call.out_spec is None or call.out_spec.kind is not None:
        raise TypeError(f"Gradient only defined for scalar-output functions. Output was a tree {call.out_spec}; "
                        "use jacrev or vjp for structured outputs")
    if outs[0].shape != ():
        raise TypeError(f"Gradient only defined for scalar-output functions. Output had shape: {outs[0].shape}. "
                        "Use jacrev or vjp for non-scalar outputs (or sum the output)")
    if outs[0].dtype.kind == "c":
        raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got {outs[0].dtype}")
    if outs[0].dtype.kind != "f":
        raise TypeError(f"grad requires real-valued outputs (a floating dtype), but got {outs[0].dtype}")


def _require_real(transform: str, tensors: Sequence[Tensor], what: str) -> None:
    """jacrev and jacfwd take and give real tensors only, as torch.func's (a complex Jacobian has no single
    convention; differentiate the real and imaginary parts, or use vjp / jvp)."""
    for i, t in enumerate(tensors):
        if t.dtype.kind == "c":
            raise RuntimeError(f"{transform}: Expected all {what} to be real but received complex tensor at "
                               f"flattened input idx: {i}")


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
        call = Call(f, args, argnums, has_aux, "grad")
        xs, outs, keep = _reverse(call)
        _check_scalar(call, outs)
        grads = _pull(outs, xs, [None], keep)
        return call.with_aux(call.outputs_tree(outs, keep), keep), call.inputs_tree(grads, keep)

    return value_and_grad_f


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
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args: Any) -> Any:
        value, g = value_and_grad_f(*args)
        return (g, value[1]) if has_aux else g

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
    call = Call(f, primals, tuple(range(len(primals))), has_aux, "vjp")
    xs, outs, keep = _reverse(call)

    def pullback(ct: Any) -> Any:
        assert call.out_spec is not None
        return call.inputs_tree(_pull(outs, xs, call.match(ct, call.out_spec, outs, "cotangent"), keep), keep)

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
    outs, out_tangents, keep = _push(call, call.match(tuple(tangents), call.in_spec, call.inputs, "tangent"))
    result = (call.outputs_tree(outs, keep), call.outputs_tree(out_tangents, keep))
    return (*result, call.aux_tree(keep)) if has_aux else result


def jacrev(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
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
    @functools.wraps(f)
    def jacrev_f(*args: Any) -> Any:
        call = Call(f, args, argnums, has_aux, "jacrev")
        _require_real("jacrev", call.inputs, "inputs")
        xs, outs, keep = _reverse(call)
        _require_real("jacrev", outs, "outputs")
        out_shapes = [out.shape for out in outs]
        seeds = basis(out_shapes, _dtype(outs), structured=True)
        grads = _pull(outs, xs, seeds, keep, batch=seeds[0].shape[:1])
        blocks = jacobian_blocks(grads, out_shapes, [x.shape for x in xs], "reverse")
        return call.with_aux(call.jacobian_tree(blocks, keep), keep)

    return jacrev_f


def jacfwd(f: Callable[..., Any], argnums: Argnums = 0, has_aux: bool = False) -> Callable[..., Any]:
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
    @functools.wraps(f)
    def jacfwd_f(*args: Any) -> Any:
        call = Call(f, args, argnums, has_aux, "jacfwd")
        _require_real("jacfwd", call.inputs, "inputs")
        in_shapes = [x.shape for x in call.inputs]
        outs, out_tangents, keep = _push(call, basis(in_shapes, _dtype(call.inputs), structured=True))
        _require_real("jacfwd", outs, "outputs")
        blocks = jacobian_blocks(out_tangents, [out.shape for out in outs], in_shapes, "forward")
        return call.with_aux(call.jacobian_tree(blocks, keep), keep)

    return jacfwd_f


def hessian(f: Callable[..., Any], argnums: Argnums = 0) -> Callable[..., Any]:
    """The Hessian, forward-over-reverse: ``jacfwd(jacrev(f, argnums), argnums)``.

    Returns:
        A function returning the Hessian, of shape ``out.shape + in.shape + in.shape`` per leaf pair.

    Example:
        >>> import numpy as np
        >>> hessian(lambda x: (x ** 3).sum())(np.array([1.0, 2.0]))
        array([[ 6.,  0.],
               [ 0., 12.]])
    """
    return jacfwd(jacrev(f, argnums), argnums)


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
    call = Call(f, primals, tuple(range(len(primals))), False, "linearize")
    out = call.outputs_tree(call(call.inputs), keep_graph=True)

    def jvp_fn(*tangents: Any) -> Any:
        return jvp(f, primals, tangents)[1]

    return out, jvp_fn
