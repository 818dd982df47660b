"""Autograd's side of the checks: vector-Jacobian products and whole analytical Jacobians, with the checks a
returned gradient must pass on the way (shape, dtype). Finite differences live in ``numerical.py``. Complex
tensors are handled in real coordinates (two per element), as the finite differences are.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.autograd import grad as autograd_grad
from funcgrad.check.arguments import tensor_outputs
from funcgrad.check.numerical import real_view
from funcgrad.check.report import GradcheckError
from funcgrad.core.tensor import Tensor

__all__ = ["Backward", "cotangent", "real_size"]

_PROJECTIONS = 2  # random grad_outputs that confirm a batched analytical Jacobian


def cotangent(v: np.ndarray, out: Tensor) -> np.ndarray:
    """grad_outputs for ``out`` from ``v`` (..., out's real size) in real coordinates: pairs become complex."""
    v = np.ascontiguousarray(v, dtype=out.data.real.dtype)
    return (v.view(out.dtype) if out.dtype.kind == "c" else v).reshape(v.shape[:-1] + out.shape)


def real_size(x: Tensor) -> int:
    """The number of real coordinates of ``x`` (two per complex element)."""
    return x.data.size * (2 if x.dtype.kind == "c" else 1)


class Backward:
    """The analytical Jacobians of ``func``'s checked outputs w.r.t. ``inputs[i]`` for ``i`` in ``indices``.

    Args:
        func, inputs, indices: the function, its arguments and the positions of those that require grad.
        nondet_tol: how much two backward runs may differ.
        check_grad_dtypes: a gradient must have its input's dtype.
        fail: builds the ``GradcheckError`` of a failed check from ``(check, message, output, input)``.
        input_label, output_label: how reports name input ``i`` and output ``j``.
    """

    def __init__(self, func: Callable[..., Any], inputs: Sequence[Any], indices: list[int], *, nondet_tol: float,
                 check_grad_dtypes: bool, fail: Callable[..., GradcheckError],
                 input_label: Callable[[int], str], output_label: Callable[[int], str] = "output {}".format) -> None:
        self.func, self.inputs, self.indices = func, inputs, indices
        self.diff = [inputs[i] for i in indices]
        self.nondet_tol, self.check_grad_dtypes = nondet_tol, check_grad_dtypes
        self.fail, self.input_label, self.output_label = fail, input_label, output_label

    def vjp(self, outputs: Sequence[Tensor], j: int, v: np.ndarray) -> list[np.ndarray]:
        """``v^T J`` for output ``j`` w.r.t. every checked input (zeros where unused), with shape/dtype checks."""
        out = outputs[j]
        if not out.requires_grad:
            return [np.zeros(real_size(x)) for x in self.diff]
        seed = cotangent(v.reshape(-1), out)
        kept = seed.copy()
        grads = autograd_grad(out, self.diff, seed, retain_graph=True, allow_unused=True)
        if not np.array_equal(seed, kept):
            raise self.fail("grad_output modified", f"A backward modified in place the grad_output given for "
                            f"{self.output_label(j)}: every other node that receives the same gradient (the inputs "
                            "of a sum, a reused tensor) then gets the changed values. Return a new tensor "
                            "(g * y, not g.mul_(y)).", j)
        rows = []
        for i, x, g in zip(self.indices, self.diff, grads):
            if g is None:
                rows.append(np.zeros(real_size(x)))
                continue
            if g.shape != x.shape:
                raise self.fail("shape", f"the analytical gradient of {self.input_label(i)} has shape "
                                f"{g.shape} but the input has shape {x.shape}; the backward must return one "
                                "gradient of the input's shape (reduce broadcast dimensions with sum_to)", j, i)
            if self.check_grad_dtypes and g.dtype != x.dtype:
                raise self.fail("dtype", f"the gradient of {self.input_label(i)} has dtype {g.dtype} but "
                                f"the input has dtype {x.dtype}; cast the gradient in the backward", j, i)
            rows.append(real_view(g.data).astype(np.float64))
        return rows

    def jacobians(self) -> tuple[list[list[np.ndarray]], list[list[np.ndarray]]]:
        """Autograd's Jacobians ``[j][pos]`` (out_j.size, in.size), computed twice to test reentrancy.

        PyTorch runs one backward per output element, twice. Here two batched backward passes (unit seeds)
        stand in for them when they agree within ``nondet_tol`` and a backward with random grad_outputs
        matches their projection: then the rows are the same numbers. Otherwise, or if the backward cannot
        batch, it is row by row, so the verdict never depends on batching.
        """
        outputs = tensor_outputs(self.func, self.inputs)
        first, second = [], []
        for j in range(len(outputs)):
            batched = self.batched_jacobian(outputs, j)
            first.append(batched if batched is not None else self.rows(outputs, j))
            second.append(batched if batched is not None else self.rows(outputs, j))
        return first, second

    def batched_jacobian(self, outputs: Sequence[Tensor], j: int) -> list[np.ndarray] | None:
        """The blocks of output ``j`` by batched backward passes, or None unless they reproduce a row loop."""
        one, two = self.batched_rows(outputs, j), self.batched_rows(outputs, j)
        if one is None or two is None or any(np.any(np.abs(a - b) > self.nondet_tol) for a, b in zip(one, two)):
            return None
        tol = 1e4 * float(np.finfo(outputs[j].dtype).eps)
        rng = np.random.default_rng(1)
        for _ in range(_PROJECTIONS):
            v = rng.standard_normal(real_size(outputs[j]))
            for row, block in zip(self.vjp(outputs, j, v), one):
                if np.any(np.abs(row - v.ravel() @ block) > tol * (np.abs(v.ravel()) @ np.abs(block) + 1e-30)):
                    return None
        return one

    def rows(self, outputs: Sequence[Tensor], j: int) -> list[np.ndarray]:
        """The Jacobian blocks of output ``j``, one backward per output element."""
        size = real_size(outputs[j])
        rows = [self.vjp(outputs, j, seed) for seed in np.eye(size)]
        return [np.stack([row[p] for row in rows]) if rows else np.zeros((0, real_size(x)))
                for p, x in enumerate(self.diff)]

    def projections(self, outputs: Sequence[Tensor], covectors: np.ndarray) -> list[np.ndarray]:
        """``covectors @ J`` w.r.t. every checked input, [pos] (k, in size), for covectors (k, the real sizes of all
        outputs, concatenated).

        One batched backward per output stands in for a backward per covector when it reproduces those of the
        first and the last covector; otherwise it is one backward per covector, so the numbers never depend on
        batching.
        """
        offsets = np.cumsum([0, *(real_size(o) for o in outputs)])
        total = [np.zeros((len(covectors), real_size(x))) for x in self.diff]
        for j in range(len(outputs)):
            seeds = covectors[:, offsets[j]:offsets[j + 1]]
            if not seeds.size:
                continue
            rows = self.batched_rows(outputs, j, seeds)
            checked = {k: self.vjp(outputs, j, seeds[k]) for k in (0, len(seeds) - 1)}
            tol = 1e4 * float(np.finfo(outputs[j].dtype).eps)
            if rows is None or any(np.any(np.abs(a - block[k]) > tol * np.abs(a).max(initial=0.0))
                                   for k, row in checked.items() for a, block in zip(row, rows)):
                each = [checked[k] if k in checked else self.vjp(outputs, j, v) for k, v in enumerate(seeds)]
                rows = [np.stack([r[p] for r in each]) for p in range(len(self.diff))]
            for t, r in zip(total, rows):
                t += r
        return total

    def batched_rows(self, outputs: Sequence[Tensor], j: int,
                     seeds: np.ndarray | None = None) -> list[np.ndarray] | None:
        """``seeds @ J`` (k, out's real size) for output ``j``'s blocks by one batched backward (unit seeds: the
        whole Jacobian), or None if the backward cannot batch."""
        out = outputs[j]
        if not out.requires_grad or not out.data.size:
            return None
        seeds = np.eye(real_size(out)) if seeds is None else seeds
        size = len(seeds)
        try:
            grads = autograd_grad(out, self.diff, cotangent(seeds, out), retain_graph=True, allow_unused=True,
                                  is_grads_batched=True)
        except Exception:  # any failure to batch: the row-by-row run decides
            return None
        blocks = []
        for x, g in zip(self.diff, grads):
            if g is None:
                blocks.append(np.zeros((size, real_size(x))))
            elif g.shape != (size, *x.shape):
                return None
            else:
                blocks.append(real_view(g.data).astype(np.float64).reshape(size, -1))
        return blocks
