"""Which outputs depend on which inputs: Jacobian and Hessian sparsity patterns, detected by tracing.

``f`` runs once on a traced input (the recorder of ``jit``), which lists every NumPy call the op
table's kernels make. The calls are then replayed on *dependency sets*: each array element carries the
set of input elements it depends on, a row of a boolean ``scipy.sparse`` matrix. The sets are structural:
a product by a value that happens to be zero, or ``where`` with a condition computed from ``x``, keeps
both dependencies, so the pattern holds at every point the function takes the same path.

- Exact: ufuncs (elementwise, broadcasting), indexing and slicing, reshapes, transposes,
  concatenation, padding, reductions, cumulative sums, ``where``, writes into slices, and products
  with a constant matrix (its nonzeros decide).
- Conservative (every output element depends on everything its operands depend on): products of two
  traced operands beyond two dimensions, ``einsum``/``tensordot``, and any call without a rule here.
- A recording that cannot see all dependencies (an array converted with ``np.asarray``, a SciPy
  kernel) gives the dense pattern, with a warning that says why.

The Hessian pattern adds, for every nonlinear call, the pairs of input elements that interact through
it: both operands' sets for a nonlinear function, the cross pairs for a product.
"""
from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

import numpy as np
import scipy.sparse as sps

from funcgrad.core.grad_mode import no_grad
from funcgrad.core.structured import dense_copy
from funcgrad.core.tensor import Tensor
from funcgrad.func.compiler.program import Guard, Slot, slots_in
from funcgrad.func.compiler.tracing import Recorder, Traced

__all__ = ["jacobian_sparsity", "hessian_sparsity"]

Deps: TypeAlias = sps.csr_array  # (elements of an array, input elements), boolean

# ufuncs whose derivative is zero wherever it exists: their results depend on nothing
_STEPS = frozenset({np.floor, np.ceil, np.trunc, np.rint, np.sign, np.floor_divide, np.signbit, np.spacing})
_LINEAR_UFUNCS = frozenset({np.add, np.subtract, np.negative, np.positive, np.conjugate})
# calls that only move, copy or drop elements, with the positions of their array arguments ("sequence": a
# list of arrays first); replayed on arrays of element numbers, they tell where each element goes
_MOVES: dict[Any, Any] = {
    operator.getitem: (0,), np.reshape: (0,), np.transpose: (0,), np.ndarray.reshape: (0,),
    np.ndarray.transpose: (0,), np.moveaxis: (0,), np.swapaxes: (0,),
    np.squeeze: (0,), np.expand_dims: (0,), np.broadcast_to: (0,), np.ravel: (0,), np.flip: (0,),
    np.roll: (0,), np.tile: (0,), np.repeat: (0,), np.diagonal: (0,), np.take: (0,), np.take_along_axis: (0,),
    np.tril: (0,), np.triu: (0,), np.atleast_1d: (0,), np.atleast_2d: (0,), np.atleast_3d: (0,),
    np.copy: (0,), np.ascontiguousarray: (0,), np.rot90: (0,), np.diag: (0,), np.pad: (0,), dense_copy: (0,),
    np.concatenate: "sequence", np.stack: "sequence", np.hstack: "sequence", np.vstack: "sequence",
    np.column_stack: "sequence", np.split: (0,), np.array_split: (0,),
}
_MOVING_METHODS = frozenset({"reshape", "transpose", "ravel", "flatten", "squeeze", "swapaxes", "copy", "astype",
                             "view", "diagonal", "repeat", "take", "conj", "conjugate"})
_PAD_MODES_THAT_MOVE = frozenset({"constant", "edge", "reflect", "symmetric", "wrap"})
# reductions, and whether each is linear
_REDUCTIONS: dict[Any, bool] = {np.sum: True, np.mean: True, np.nansum: True, np.prod: False, np.amax: False,
                                np.amin: False, np.max: False, np.min: False, np.std: False, np.var: False}
_REDUCING_METHODS = {"sum": True, "mean": True, "prod": False, "max": False, "min": False, "std": False,
                     "var": False}
_CUMULATIVE = {np.cumsum: True, np.cumprod: False}
_MULTILINEAR = frozenset({np.einsum, np.tensordot, np.dot, np.inner, np.outer, np.vdot, np.kron, np.cross})


def _empty(rows: int, n: int) -> Deps:
    return sps.csr_array((rows, n), dtype=bool)


def _union(parts: Sequence[Deps | None]) -> Deps | None:
    """Element by element, the union of the sets of equally shaped arrays (None: no sets)."""
    present = [p for p in parts if p is not None]
    if not present:
        return None
    total = present[0]
    for p in present[1:]:
        total = total + p
    return sps.csr_array(total.astype(bool))


def _product(left: Any, right: Any) -> Deps:
    """Boolean matrix product."""
    return sps.csr_array((sps.csr_array(left).astype(np.int32) @ sps.csr_array(right).astype(np.int32)).astype(bool))


def _all_of(deps: Deps) -> Deps:
    """One row: every input any element depends on."""
    return sps.csr_array(deps.sum(axis=0).astype(bool).reshape(1, -1))


def _repeated(row: Deps, rows: int) -> Deps:
    return sps.csr_array(row[np.zeros(rows, dtype=np.int64)])


def _broadcast(deps: Deps | None, shape: tuple[int, ...], target: tuple[int, ...]) -> Deps | None:
    """The sets of an array of ``shape`` broadcast to ``target``: rows repeated as the elements are."""
    if deps is None or shape == target:
        return deps
    where = np.broadcast_to(np.arange(int(np.prod(shape))).reshape(shape), target).ravel()
    return sps.csr_array(deps[where])


def _numbered(deps: Deps | None, shape: tuple[int, ...], offset: int) -> np.ndarray:
    """Element numbers for replaying a move: ``offset + 1 ..`` for an array with sets, 0 (nothing) for a constant."""
    if deps is None:
        return np.zeros(shape, np.int64)
    return (offset + 1 + np.arange(int(np.prod(shape)), dtype=np.int64)).reshape(shape)


def _grouping(shape: tuple[int, ...], axis: Any, cumulative: bool) -> sps.csr_array:
    """The 0/1 matrix mapping elements of an array of ``shape`` to the results of a reduction (or a cumulative
    reduction) over ``axis`` (None: all, flattened)."""
    size = int(np.prod(shape))
    numbers = np.arange(size).reshape(shape)
    if cumulative:
        lines = numbers.reshape(1, -1) if axis is None else np.moveaxis(numbers, axis, -1).reshape(-1, shape[axis])
        length = lines.shape[1]
        result_k, source_k = np.nonzero(np.tril(np.ones((length, length), bool)))  # result k sums sources <= k
        rows, cols = lines[:, result_k].ravel(), lines[:, source_k].ravel()
        return sps.csr_array((np.ones(rows.size, bool), (rows, cols)), shape=(size, size))
    axes = tuple(range(len(shape))) if axis is None else tuple(a % len(shape) for a in np.atleast_1d(axis))
    kept = tuple(1 if i in axes else s for i, s in enumerate(shape))
    target = np.broadcast_to(np.arange(int(np.prod(kept))).reshape(kept), shape).ravel()
    return sps.csr_array((np.ones(size, bool), (target, np.arange(size))), shape=(int(np.prod(kept)), size))


class _Environment:
    """Values and dependency sets of a recorded program's slots, replayed step by step."""

    def __init__(self, recorder: Recorder, x: np.ndarray) -> None:
        self.n = x.size
        self.values: dict[int, Any] = {**recorder.constants, 0: x}
        self.deps: dict[int, Deps | None] = {0: sps.csr_array(sps.identity(self.n, dtype=bool, format="csr"))}
        self.pairs = _empty(self.n, self.n)  # the Hessian pattern being built

    def interact(self, left: Deps | None, right: Deps | None = None) -> None:
        """Record that each element mixes its ``left`` inputs with its ``right`` inputs (``left``'s own, if None)."""
        right = left if right is None else right
        if left is not None and right is not None and left.nnz and right.nnz:
            cross = _product(left.T, right)
            self.pairs = sps.csr_array((self.pairs + cross + cross.T).astype(bool))

    def value(self, template: Any) -> Any:
        if type(template) is Slot:
            return self.values[template.index]
        if isinstance(template, list | tuple):
            return type(template)(self.value(t) for t in template)
        if isinstance(template, dict):
            return {k: self.value(t) for k, t in template.items()}
        return template

    def sets(self, template: Any) -> Deps | None:
        return self.deps.get(template.index) if type(template) is Slot else None

    def run(self, fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], out: Any, writes: bool) -> None:
        """Replay one step: its values, and its results' sets."""
        values, kwvalues = self.value(args), self.value(kwargs)
        result = fn(*values, **kwvalues)
        if isinstance(out, Guard):
            return
        if fn is operator.setitem or fn is np.copyto:  # dst[key] = src, or dst[...] = src
            target, key, source = (args[0], values[1], args[2]) if fn is operator.setitem else \
                (args[0], Ellipsis, args[1])
            self._assign(target, key, source)
            self._spread_to_aliases(target.index)
            return
        if out is None:  # another call writing into its first argument (fill, sort, ...)
            if writes and type(args[0]) is Slot:
                (deps,) = self._anything(fn, args, kwargs, [np.shape(values[0])])
                self.deps[args[0].index] = _union([self.deps.get(args[0].index), deps])
                self._spread_to_aliases(args[0].index)
            return
        outs = out if isinstance(out, tuple) else (out,)
        results = tuple(result) if isinstance(out, tuple) else (result,)
        for slot, r in zip(outs, results):
            self.values[slot] = r
        for slot, deps in zip(outs, self._rule(fn, args, kwargs, values, kwvalues, results)):
            self.deps[slot] = deps
        if writes:
            self._spread_to_aliases(outs[0])

    def _spread_to_aliases(self, slot: int) -> None:
        """After a write into ``slot``: arrays sharing its memory may now hold any of what it depends on."""
        deps = self.deps.get(slot)
        if deps is None or not deps.nnz:
            return
        written, everything = self.values[slot], _all_of(deps)
        for other, value in self.values.items():
            if other != slot and isinstance(value, np.ndarray) and np.may_share_memory(value, written):
                self.deps[other] = _union([self.deps.get(other), _repeated(everything, value.size)])

    # ----- rules ---------------------------------------------------------------------------------
    def _rule(self, fn: Any, args: list[Any], kwargs: dict[str, Any], values: Sequence[Any],
              kwvalues: dict[str, Any], results: Sequence[Any]) -> list[Deps | None]:
        shapes = [np.shape(r) for r in results]
        owner = getattr(fn, "__self__", None)
        name = getattr(fn, "__name__", "")
        method = name[len("ndarray."):] if name.startswith("ndarray.") else None
        if isinstance(fn, np.ufunc) and fn.signature is None:
            return [self._ufunc(fn, args, values, shapes[0], results[0])]
        if isinstance(owner, np.ufunc) and name in ("reduce", "accumulate"):
            axis = kwvalues.get("axis", values[1] if len(values) > 1 else 0)
            return [self._reduce(args[0], values[0], axis, owner in _LINEAR_UFUNCS, name == "accumulate")]
        if fn is np.matmul or (fn is np.dot and all(1 <= np.ndim(v) <= 2 for v in values[:2])):
            return [self._matmul(args[0], args[1], values[0], values[1], shapes[0])]
        if fn in _REDUCTIONS or method in _REDUCING_METHODS:
            axis = kwvalues.get("axis", values[1] if len(values) > 1 else None)
            linear = _REDUCTIONS[fn] if fn in _REDUCTIONS else _REDUCING_METHODS[method]  # type: ignore[index]
            return [self._reduce(args[0], values[0], axis, linear, cumulative=False)]
        if fn in _CUMULATIVE:
            axis = kwvalues.get("axis", values[1] if len(values) > 1 else None)
            return [self._reduce(args[0], values[0], axis, _CUMULATIVE[fn], cumulative=True)]
        if fn is np.where and len(values) == 3:  # the condition picks by value: both branches' sets, structurally
            return [_union([_broadcast(self.sets(args[i]), np.shape(values[i]), shapes[0]) for i in (1, 2)])]
        moves = (0,) if method in _MOVING_METHODS or isinstance(fn, operator.attrgetter) else _MOVES.get(fn)
        if fn is np.pad:
            kwvalues = {**kwvalues, "mode": kwvalues.get("mode", values[2] if len(values) > 2 else "constant")}
            if kwvalues["mode"] not in _PAD_MODES_THAT_MOVE or kwvalues.get("reflect_type", "even") != "even":
                moves = None  # (an odd reflection computes 2 x_edge - x: not a move)
            elif kwvalues["mode"] == "constant":
                kwvalues["constant_values"] = 0  # element number 0: no dependency
        if moves is not None:
            return self._move(fn, moves, args, values[:2] if fn is np.pad else values, kwvalues, results)
        return self._anything(fn, args, kwargs, shapes)

    def _ufunc(self, fn: np.ufunc, args: list[Any], values: Sequence[Any], shape: tuple[int, ...],
               result: Any) -> Deps | None:
        if fn in _STEPS or np.asarray(result).dtype == bool:
            return None
        parts = [_broadcast(self.sets(a), np.shape(v), shape) for a, v in zip(args, values)]
        if fn is np.multiply:  # bilinear: only the pairs across its operands
            self.interact(*parts)
        elif fn is np.true_divide:  # linear in the numerator
            if parts[1] is not None:
                self.interact(_union(parts))
        elif fn not in _LINEAR_UFUNCS:
            self.interact(_union(parts))
        return _union(parts)

    def _reduce(self, arg: Any, value: Any, axis: Any, linear: bool, cumulative: bool) -> Deps | None:
        deps = self.sets(arg)
        if deps is None:
            return None
        reduced = _product(_grouping(np.shape(value), axis, cumulative), deps)
        if not linear:
            self.interact(reduced)
        return reduced

    def _matmul(self, a: Any, b: Any, va: Any, vb: Any, shape: tuple[int, ...]) -> Deps | None:
        da, db = self.sets(a), self.sets(b)
        if da is None and db is None:
            return None
        if not (1 <= np.ndim(va) <= 2 and 1 <= np.ndim(vb) <= 2):
            return self._anything(np.matmul, [a, b], {}, [shape])[0]
        A, B = np.atleast_2d(va), (vb.reshape(-1, 1) if np.ndim(vb) == 1 else vb)
        (m, k), n = A.shape, B.shape[1]
        parts = []
        if da is not None:  # out[i, j] <- a[i, l] where b[l, j] may be nonzero
            mask_b = np.ones(B.shape, bool) if db is not None else B != 0
            parts.append(_product(sps.kron(sps.identity(m), sps.csr_array(mask_b.T)), da))
        if db is not None:  # out[i, j] <- b[l, j] where a[i, l] may be nonzero
            mask_a = np.ones(A.shape, bool) if da is not None else A != 0
            parts.append(_product(sps.kron(sps.csr_array(mask_a), sps.identity(n)), db))
        if da is not None and db is not None:  # a[., l] meets b[l, .]
            self.interact(_product(_grouping((m, k), 0, False), da), _product(_grouping((k, n), 1, False), db))
        return _union(parts)

    def _move(self, fn: Any, moves: Any, args: list[Any], values: Sequence[Any], kwvalues: dict[str, Any],
              results: Sequence[Any]) -> list[Deps | None]:
        numbered = list(values)
        stacked: list[Deps] = []

        def number(template: Any, value: Any) -> np.ndarray:
            deps = self.sets(template)
            numbers = _numbered(deps, np.shape(value), sum(d.shape[0] for d in stacked))
            if deps is not None:
                stacked.append(deps)
            return numbers

        if moves == "sequence":
            numbered[0] = [number(t, v) for t, v in zip(args[0], values[0])]
        else:
            for i in moves:
                numbered[i] = number(args[i], values[i])
        if not stacked:
            return [None] * len(results)
        moved = fn(*numbered, **kwvalues)
        table = sps.vstack([_empty(1, self.n), *stacked], format="csr")
        return [sps.csr_array(table[np.asarray(m, dtype=np.int64).ravel()])
                for m in (moved if len(results) > 1 else (moved,))]

    def _assign(self, target: Slot, key: Any, source: Any) -> None:
        deps_target, deps_source = self.sets(target), self.sets(source)
        if deps_target is None and deps_source is None:
            return
        shape = np.shape(self.values[target.index])
        size = int(np.prod(shape))
        numbers = np.arange(1, size + 1, dtype=np.int64).reshape(shape)
        numbers[key] = _numbered(deps_source, np.shape(self.value(source)), size)
        table = sps.vstack([_empty(1, self.n), deps_target if deps_target is not None else _empty(size, self.n),
                            *([deps_source] if deps_source is not None else [])], format="csr")
        self.deps[target.index] = sps.csr_array(table[numbers.ravel()])

    def _anything(self, fn: Any, args: list[Any], kwargs: dict[str, Any],
                  shapes: Sequence[tuple[int, ...]]) -> list[Deps | None]:
        """No rule: every element of every result depends on everything any array argument depends on."""
        found = [_all_of(self.deps[s.index]) for s in slots_in((args, kwargs)) if self.deps.get(s.index) is not None]
        if not found:
            return [None] * len(shapes)
        everything = _union(found)
        assert everything is not None
        if fn not in _MULTILINEAR:
            self.interact(everything)
        else:  # linear in each traced operand: only pairs from different operands mix
            for i, left in enumerate(found):
                for right in found[i + 1:]:
                    self.interact(left, right)
        return [_repeated(everything, int(np.prod(shape))) for shape in shapes]


def _trace(f: Callable[..., Any], x: Any, caller: str) -> tuple[_Environment | None, Any, list[Any], np.ndarray]:
    """Run ``f`` on a traced ``x`` and replay the recording on dependency sets."""
    x = np.asarray(x.data if isinstance(x, Tensor) else x)
    if x.dtype.kind not in "fc":
        x = x.astype(np.float64)
    with no_grad(), Recorder([x]) as recorder:
        out = f(Tensor(recorder.inputs[0]))
    if isinstance(out, list | tuple | dict) or out is None:  # (a pattern has one output's rows)
        raise TypeError(f"{caller}: f must return one array, got {type(out).__name__}")
    outputs = [out.data if isinstance(out, Tensor) else out]
    if recorder.escaped is not None and not recorder.steps_complete:
        warnings.warn(f"{caller}: the dependencies of f cannot be traced ({recorder.escaped}), so the pattern "
                      "is dense; pass sparsity= yourself or keep f in funcgrad/NumPy operations", RuntimeWarning,
                      stacklevel=3)
        return None, out, outputs, x
    env = _Environment(recorder, x)
    for fn, args, kwargs, slot, writes in recorder.steps:
        env.run(fn, args, kwargs, slot, writes)
    return env, out, outputs, x


def jacobian_sparsity(f: Callable[..., Any]) -> Callable[[Any], sps.csr_array]:
    """Which outputs of ``f`` depend on which inputs: a boolean ``(out.size, x.size)`` sparse matrix.

    Args:
        f: a function of one array returning one array, written with funcgrad (or NumPy) operations.

    Returns:
        A function of ``x`` returning the pattern as a ``scipy.sparse.csr_array`` of booleans, rows over
        the flattened output, columns over the flattened input. Exact for elementwise, indexing,
        reshaping, concatenation and reduction steps; conservative where a step has no rule.

    Example:
        >>> import numpy as np
        >>> import funcgrad as fg
        >>> jacobian_sparsity(lambda u: u[1:] - u[:-1])(np.zeros(4)).toarray().astype(int)
        array([[1, 1, 0, 0],
               [0, 1, 1, 0],
               [0, 0, 1, 1]])
    """
    def pattern(x: Any) -> sps.csr_array:
        env, out, outputs, x_arr = _trace(f, x, "jacobian_sparsity")
        m = int(np.size(outputs[0].value if isinstance(outputs[0], Traced) else outputs[0]))
        if env is None:
            return sps.csr_array(np.ones((m, x_arr.size), bool))
        value = outputs[0]
        deps = env.deps.get(value.slot) if isinstance(value, Traced) else None
        return sps.csr_array(deps if deps is not None else _empty(m, x_arr.size))

    return pattern


def hessian_sparsity(f: Callable[..., Any]) -> Callable[[Any], sps.csr_array]:
    """Which pairs of inputs interact in ``f``: a boolean symmetric ``(x.size, x.size)`` sparse matrix.

    An entry ``(i, j)`` is set when some nonlinear step of ``f`` mixes inputs ``i`` and ``j`` (or is
    nonlinear in ``i`` alone, for ``i == j``): every nonzero of the Hessian of a scalar ``f`` is in it.

    Example:
        >>> import numpy as np
        >>> hessian_sparsity(lambda u: (u[1:] * u[:-1]).sum())(np.zeros(3)).toarray().astype(int)
        array([[0, 1, 0],
               [1, 0, 1],
               [0, 1, 0]])
    """
    def pattern(x: Any) -> sps.csr_array:
        env, _, outputs, x_arr = _trace(f, x, "hessian_sparsity")
        if np.size(outputs[0].value if isinstance(outputs[0], Traced) else outputs[0]) != 1:
            raise ValueError(f"hessian_sparsity: f must return a scalar (one element), got shape "
                             f"{np.shape(outputs[0].value if isinstance(outputs[0], Traced) else outputs[0])}")
        if env is None:
            return sps.csr_array(np.ones((x_arr.size, x_arr.size), bool))
        return env.pairs

    return pattern
