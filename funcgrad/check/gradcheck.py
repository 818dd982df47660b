"""``gradcheck`` and ``gradgradcheck``: compare autograd's Jacobians with central finite differences."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd.api import grad as autograd_grad
from funcgrad.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by ``gradcheck``/``gradgradcheck`` when autograd and finite differences disagree."""


def _as_tuple(value: Any) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple | list) else (value,)


def _differentiable_outputs(func: Callable[..., Any], inputs: tuple[Any, ...]) -> tuple[Tensor, ...]:
    outs = _as_tuple(func(*inputs))
    return tuple(o for o in outs if isinstance(o, Tensor) and o.dtype.kind in "fc")


def numerical_jacobian(func: Callable[..., Any], inputs: tuple[Any, ...], index: int,
                       eps: float) -> list[np.ndarray]:
    """Central differences of every output w.r.t. input ``index``: one (out.size, in.size) matrix per output."""
    x = inputs[index]
    flat = x.data.reshape(-1)  # x is contiguous (see _prepare), so this is a view
    columns: list[list[np.ndarray]] = []
    for k in range(flat.size):
        orig = flat[k].copy()
        flat[k] = orig + eps
        plus = [o.data.astype(np.result_type(o.dtype, np.float64)).ravel().copy()
                for o in _differentiable_outputs(func, inputs)]
        flat[k] = orig - eps
        minus = [o.data.ravel().copy() for o in _differentiable_outputs(func, inputs)]
        flat[k] = orig
        columns.append([(p - m) / (2 * eps) for p, m in zip(plus, minus)])
    n_out = len(columns[0]) if columns else len(_differentiable_outputs(func, inputs))
    return [np.stack([c[j] for c in columns], axis=1) if columns else
            np.zeros((_differentiable_outputs(func, inputs)[j].data.size, 0)) for j in range(n_out)]


def analytical_jacobian(func: Callable[..., Any], inputs: tuple[Any, ...],
                        indices: Sequence[int]) -> list[list[np.ndarray]]:
    """Autograd's Jacobians, one row per output element: result[j][i] is (out_j.size, in_i.size)."""
    outputs = _differentiable_outputs(func, inputs)
    diff_inputs = [inputs[i] for i in indices]
    result = []
    for out in outputs:
        blocks = [np.zeros((out.data.size, inputs[i].data.size), dtype=np.result_type(inputs[i].dtype, float))
                  for i in indices]
        if out.requires_grad:
            for r in range(out.data.size):
                seed = np.zeros(out.shape, out.dtype)
                seed.reshape(-1)[r] = 1
                grads = autograd_grad(out, diff_inputs, seed, retain_graph=True, allow_unused=True)
                for block, g in zip(blocks, grads):
                    if g is not None:
                        block[r] = np.asarray(g.data).reshape(-1)
        result.append(blocks)
    return result


def _prepare(inputs: Any) -> tuple[tuple[Any, ...], list[int]]:
    """Fresh contiguous leaves for the tensors that require grad; other arguments unchanged."""
    prepared = []
    indices = []
    for i, a in enumerate(_as_tuple(inputs)):
        if isinstance(a, Tensor) and a.requires_grad:
            prepared.append(Tensor(np.array(a.data, copy=True, order="C"), requires_grad=True))
            indices.append(i)
        else:
            prepared.append(a)
    return tuple(prepared), indices


def _format_mismatch(j: int, i: int, numerical: np.ndarray, analytical: np.ndarray, atol: float,
                     rtol: float) -> str:
    err = np.abs(analytical - numerical)
    bad = err > atol + rtol * np.abs(numerical)
    worst = np.unravel_index(np.argmax(np.where(bad, err, -1)), err.shape)
    with np.printoptions(precision=6, threshold=64, linewidth=110):
        return (f"Jacobian mismatch for output {j} with respect to input {i}: {int(bad.sum())} of {bad.size} "
                f"elements differ by more than atol={atol} + rtol={rtol} * |numerical|.\n"
                f"worst element (output element {worst[0]}, input element {worst[1]}): numerical "
                f"{numerical[worst]:.8g}, analytical {analytical[worst]:.8g}, abs error {err[worst]:.3g}\n"
                f"numerical:\n{numerical}\nanalytical:\n{analytical}")


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False) -> bool:
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of arguments; Tensors with ``requires_grad=True`` are checked.
        eps: the finite-difference step.
        atol, rtol: the tolerance: ``|analytical - numerical| <= atol + rtol * |numerical|``.
        raise_exception: raise ``GradcheckError`` on failure (else return False).

    Returns:
        True when every Jacobian matches.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.randn(3, seed=0, requires_grad=True)
        >>> fg.check.gradcheck(fg.sin, (x,))
        True
    """
    prepared, indices = _prepare(inputs)
    if not indices:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none did")
    if check_forward_ad:
        raise NotImplementedError("check_forward_ad needs forward-mode AD, which funcgrad does not have yet")
    if not check_backward_ad:
        return True
    analytical = analytical_jacobian(func, prepared, indices)
    for pos, i in enumerate(indices):
        numerical = numerical_jacobian(func, prepared, i, eps)
        for j, (num, rows) in enumerate(zip(numerical, analytical)):
            ana = rows[pos]
            if not np.allclose(ana, num, rtol=rtol, atol=atol):
                if raise_exception:
                    raise GradcheckError(_format_mismatch(j, i, num, ana, atol, rtol))
                return False
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False) -> bool:
    """Check second derivatives: ``gradcheck`` of the function that returns ``func``'s vector-Jacobian
    products (with ``create_graph=True``), w.r.t. the inputs and the grad_outputs.

    Args:
        func, inputs, eps, atol, rtol, raise_exception: as ``gradcheck``.
        grad_outputs: the vectors of the first-order products; random (and themselves checked) if None.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.randn(3, seed=0, requires_grad=True)
        >>> fg.check.gradgradcheck(fg.tanh, (x,))
        True
    """
    prepared, indices = _prepare(inputs)
    outputs = _differentiable_outputs(func, prepared)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        gos = tuple(Tensor(rng.standard_normal(o.shape).astype(o.dtype), requires_grad=True) for o in outputs)
    else:
        gos = _as_tuple(grad_outputs)
    n = len(prepared)

    def first_order(*args: Any) -> tuple[Tensor, ...]:
        outs = _differentiable_outputs(func, args[:n])
        diff = [args[i] for i in indices]
        used = [(o, g) for o, g in zip(outs, args[n:]) if o.requires_grad]
        if not used:
            return tuple(Tensor(np.zeros(d.shape, d.dtype)) for d in diff)
        grads = autograd_grad([o for o, _ in used], diff, [g for _, g in used], create_graph=True,
                              allow_unused=True)
        return tuple(g if g is not None else Tensor(np.zeros(d.shape, d.dtype)) for g, d in zip(grads, diff))

    return gradcheck(first_order, prepared + tuple(gos), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
