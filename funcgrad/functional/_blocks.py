"""Jacobians in blocks of seeds: bounded memory, any executor, a progress bar.

A one-pass Jacobian pushes (or pulls) every seed at once, so it needs as many times the memory of one
pass as there are seeds. Here the seeds are cut into chunks: ``chunk_size`` rows, or as many as fit in
``max_memory`` bytes after a probe of the first chunk. Each chunk is one batched pass of ``Products``, and
its rows are written into one preallocated result as they arrive. ``Products`` is picklable, so with an
``executor`` (any ``concurrent.futures.Executor``, Dask's ``Client.get_executor()`` included) the chunks
run in other processes, each re-running the function.

``Products`` is one of two batched directional derivatives of ``f`` at fixed arguments, applied to a
block of seeds (rows over the flat concatenation of the leaves):

- ``"reverse"``: each seed a cotangent of the outputs; its row is a row of the Jacobian ``J``;
- ``"forward"``: each seed a tangent of the inputs; its row is ``J @ seed``, a column of ``J``.

With ``inner`` (a module-level transform such as ``jacrev``, so it pickles), the derivative is taken of
``inner(f, argnums)`` instead of ``f``: forward mode over ``jacrev`` gives Hessian-vector products.
"""
from __future__ import annotations

import pickle
import sys
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Literal

import numpy as np

from funcgrad.core.tensor import Tensor
from funcgrad.functional._argnums import Argnums, Call
from funcgrad.functional._core import tangent
from funcgrad.functional._passes import inside_transform, pull, push_pass, reverse_pass

__all__ = ["Products", "blocked", "identity_rows", "split_rows", "check_scale_options", "jacobian_matrix",
           "matrix_blocks", "blocked_jacobian", "gradient", "require_real", "Progress"]

Mode = Literal["reverse", "forward"]
_PROBE_ROWS = 8  # rows of the first chunk when max_memory must be turned into a chunk size


def split_rows(rows: np.ndarray, shapes: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """A ``(c, N)`` block of seeds as one ``(c, *shape)`` array per leaf (views, no copy)."""
    pieces, start = [], 0
    for shape in shapes:
        n = int(np.prod(shape, dtype=np.int64))
        pieces.append(rows[:, start:start + n].reshape((len(rows), *shape)))
        start += n
    return pieces


def identity_rows(start: int, stop: int, n: int, dtype: Any) -> np.ndarray:
    """Rows ``start:stop`` of the ``n x n`` identity, built alone (never the whole identity)."""
    rows = np.zeros((stop - start, n), dtype)
    rows[np.arange(stop - start), np.arange(start, stop)] = 1
    return rows


def _flat(leaves: Sequence[Any], batch: int) -> np.ndarray:
    """Batched leaves ``(c, *shape_k)`` side by side as one ``(c, sum of sizes)`` array."""
    arrays = [np.asarray(leaf.data if hasattr(leaf, "grad_fn") else leaf).reshape(batch, -1) for leaf in leaves]
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays, axis=1)


class Products:
    """Batched directional derivatives of ``f(*args)`` w.r.t. ``args[argnums]``: see the module docstring.

    Args:
        f: the user's function (pytrees in and out).
        args: its positional arguments.
        argnums: which arguments are differentiated.
        mode: ``"reverse"`` or ``"forward"``.
        caller: the transform's name, for error messages.
        inner: a transform ``inner(f, argnums)`` whose result is differentiated instead of ``f``.
    """

    def __init__(self, f: Callable[..., Any], args: Sequence[Any], argnums: Argnums, mode: Mode, caller: str,
                 inner: Callable[[Callable[..., Any], Argnums], Callable[..., Any]] | None = None,
                 has_aux: bool = False) -> None:
        self.f, self.args, self.argnums, self.mode, self.caller = f, tuple(args), argnums, mode, caller
        self.inner, self.has_aux = inner, has_aux
        self.call: Call | None = None          # the last in-process call: output tree, aux
        self.out_shapes: list[tuple[int, ...]] = []
        self._graph: tuple[Any, Any] | None = None  # a reverse pass's (inputs, outputs), kept for the next block

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "call": None, "_graph": None}  # a worker runs f itself

    def fresh(self) -> Products:
        """A copy that shares no pass with this one: a task for an executor (threads included)."""
        return Products(self.f, self.args, self.argnums, self.mode, self.caller, self.inner, self.has_aux)

    def _new_call(self) -> Call:
        fn = self.f if self.inner is None else self.inner(self.f, self.argnums)
        self.call = Call(fn, self.args, self.argnums, self.has_aux, self.caller)
        return self.call

    def forward(self) -> tuple[list[Any], list[Any]]:
        """Reverse mode: run ``f`` once, tracked, and keep the graph for every block: ``(inputs, outputs)``."""
        if self._graph is None:
            xs, outs, _ = reverse_pass(self._new_call())
            self._graph, self.out_shapes = (xs, outs), [out.shape for out in outs]
        return self._graph

    def __call__(self, seeds: np.ndarray) -> np.ndarray:
        """The ``(c, M)`` results for a ``(c, N)`` block of seeds."""
        batch = len(seeds)
        if self.mode == "reverse":
            xs, outs = self.forward()
            return _flat(pull(outs, xs, split_rows(seeds, self.out_shapes), False, batch=(batch,)), batch)
        call = self._new_call()
        outs, tangents, _ = push_pass(call, split_rows(seeds, [x.shape for x in call.inputs]))
        self.out_shapes = [out.shape for out in outs]
        return _flat(tangents, batch)


class _Gradient:
    """The gradient of a scalar function w.r.t. ``argnums``, as a picklable function (an ``inner`` transform)."""

    def __init__(self, f: Callable[..., Any], argnums: Argnums) -> None:
        self.f, self.argnums = f, argnums

    def __call__(self, *args: Any) -> Any:
        call = Call(self.f, args, self.argnums, False, "hessian")
        xs, outs, traced = reverse_pass(call)
        return call.inputs_tree(pull(outs, xs, [None], traced.graph), bool(traced))


def gradient(f: Callable[..., Any], argnums: Argnums) -> Callable[..., Any]:
    """``inner`` transform for Hessians of scalar functions: the gradient of ``f`` w.r.t. ``argnums``."""
    return _Gradient(f, argnums)


def require_real(transform: str, tensors: Sequence[Any], what: str) -> None:
    """jacrev and jacfwd take and give real tensors only, as torch.func's (a complex Jacobian has no single
    convention; differentiate the real and imaginary parts, or use vjp / jvp)."""
    for i, t in enumerate(tensors):
        if t.dtype.kind == "c":
            raise RuntimeError(f"{transform}: Expected all {what} to be real but received complex tensor at "
                               f"flattened input idx: {i}")


def check_scale_options(chunk_size: int | None, max_memory: float | None, executor: Executor | None,
                        caller: str) -> bool:
    """Validate the scale options; True when any of them asks for blocked passes."""
    if chunk_size is not None and (not isinstance(chunk_size, int | np.integer) or chunk_size < 1):
        raise ValueError(f"{caller}: chunk_size must be a positive int (or None), got {chunk_size!r}")
    if max_memory is not None and (not isinstance(max_memory, int | float) or max_memory <= 0):
        raise ValueError(f"{caller}: max_memory must be a positive number of bytes (or None), got {max_memory!r}")
    if executor is not None and not isinstance(executor, Executor):
        raise TypeError(f"{caller}: executor must be a concurrent.futures.Executor (Dask: client.get_executor()), "
                        f"got {type(executor).__name__}")
    return chunk_size is not None or max_memory is not None or executor is not None


def _no_graph(caller: str) -> ValueError:
    return ValueError(f"{caller}: chunk_size, max_memory and executor compute the Jacobian without a graph, so they "
                      "cannot be used inside another transform or with create_graph=True; apply them to the "
                      "outermost transform only")


def _sizes(shapes: Sequence[tuple[int, ...]]) -> list[int]:
    return [int(np.prod(shape, dtype=np.int64)) for shape in shapes]


def _float_dtype(dtypes: Sequence[np.dtype]) -> np.dtype:
    floating = [d for d in dtypes if d.kind in "fc"]
    return np.result_type(*floating) if floating else np.dtype(np.float64)


def jacobian_matrix(products: Products, chunk_size: int | None, max_memory: float | None,
                    executor: Executor | None, progress: bool) -> tuple[np.ndarray, list[tuple[int, ...]],
                                                                       list[tuple[int, ...]]]:
    """The Jacobian of ``products``'s function as one ``(outputs, inputs)`` matrix over the flat leaves, by
    blocks of identity seeds; with the output and input leaf shapes."""
    probe = Call(products.f, products.args, products.argnums, products.has_aux, products.caller)
    if inside_transform() or any(x.requires_grad or tangent(x) is not None for x in probe.inputs):
        raise _no_graph(products.caller)  # (inside a transform, f may close over what it traces: zeros, silently)
    require_real(products.caller, probe.inputs, "inputs")
    in_shapes = [x.shape for x in probe.inputs]
    if products.mode == "reverse":
        require_real(products.caller, products.forward()[1], "outputs")
        shapes, dtype = products.out_shapes, _float_dtype([out.dtype for out in products.forward()[1]])
    else:
        shapes, dtype = in_shapes, _float_dtype([x.dtype for x in probe.inputs])
    n = sum(_sizes(shapes))
    rows = blocked(products, n, lambda start, stop: identity_rows(start, stop, n, dtype), chunk_size, max_memory,
                   executor, progress)
    return (rows if products.mode == "reverse" else rows.T), products.out_shapes, in_shapes


def matrix_blocks(matrix: np.ndarray, out_shapes: Sequence[tuple[int, ...]],
                  in_shapes: Sequence[tuple[int, ...]]) -> list[list[np.ndarray]]:
    """Cut an ``(outputs, inputs)`` matrix over flat leaves into blocks ``[i][j]`` of shape ``out_i + in_j``."""
    row_starts = np.cumsum([0, *_sizes(out_shapes)])
    col_starts = np.cumsum([0, *_sizes(in_shapes)])
    return [[matrix[row_starts[i]:row_starts[i + 1], col_starts[j]:col_starts[j + 1]].reshape(out + inp)
             for j, inp in enumerate(in_shapes)] for i, out in enumerate(out_shapes)]


def blocked_jacobian(products: Products, chunk_size: int | None, max_memory: float | None,
                     executor: Executor | None, progress: bool) -> Any:
    """The Jacobian tree a ``func`` transform returns (output tree outside, argnums tree inside), by blocks."""
    matrix, out_shapes, in_shapes = jacobian_matrix(products, chunk_size, max_memory, executor, progress)
    call = products.call
    assert call is not None
    blocks = [[Tensor(block) for block in row] for row in matrix_blocks(matrix, out_shapes, in_shapes)]
    return call.with_aux(call.jacobian_tree(blocks, False), False)


@contextmanager
def _peak() -> Iterator[list[int]]:
    """Measure the peak of traced (Python and NumPy) memory inside the block: ``[peak bytes]``."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = [0]
    try:
        yield result
    finally:
        result[0] = max(1, tracemalloc.get_traced_memory()[1] - base)
        if started:
            tracemalloc.stop()


class Progress:
    """A progress bar over rows (seeds, columns): tqdm when installed, else one line rewritten on stderr;
    nothing when not ``enabled``."""

    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self.bar: Any = None
        self.enabled, self.total, self.done, self.desc = enabled, total, 0, desc
        if enabled:
            try:
                from tqdm.auto import tqdm  # optional dependency
            except ImportError:
                return
            self.bar = tqdm(total=total, desc=desc, unit="row")

    def update(self, rows: int) -> None:
        """``rows`` more are done."""
        self.done += rows
        if self.bar is not None:
            self.bar.update(rows)
        elif self.enabled:
            print(f"\r{self.desc}: {self.done}/{self.total} rows", end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        """End the bar (a new line on stderr)."""
        if self.bar is not None:
            self.bar.close()
        elif self.enabled:
            print(file=sys.stderr, flush=True)


def _ensure_picklable(products: Products, executor: Executor) -> None:
    if not isinstance(executor, ProcessPoolExecutor):
        return  # other executors (threads, Dask's cloudpickle) accept more; their errors come from the futures
    try:
        pickle.dumps(products)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise TypeError(f"{products.caller}: executor= runs the function in other processes, so it must be "
                        f"picklable, and {products.f!r} is not ({err}). Define it at module level (not a lambda "
                        "or a nested function), or drop executor= and use chunk_size= in this process") from None


def blocked(products: Products, n_rows: int, rows: Callable[[int, int], np.ndarray], chunk_size: int | None,
            max_memory: float | None, executor: Executor | None, progress: bool) -> np.ndarray:
    """All ``n_rows`` results of ``products``, computed in chunks: an ``(n_rows, M)`` array.

    Args:
        products: the batched derivative to apply.
        n_rows: how many seeds.
        rows: ``rows(start, stop)`` builds the seeds ``start:stop`` as a ``(stop - start, N)`` array.
        chunk_size: seeds per pass; None to derive it from ``max_memory`` (or do everything at once).
        max_memory: bytes one pass may use; the first chunk is a probe that measures the cost of a seed.
        executor: runs the chunks after the first (which also gives the result's shape) when given.
        progress: show a progress bar.
    """
    first = min(n_rows, chunk_size or (_PROBE_ROWS if max_memory is not None else n_rows))
    bar = Progress(n_rows, products.caller, progress)
    if max_memory is not None:
        with _peak() as peak:
            head = products(rows(0, first))
        chunk = chunk_size or max(1, int(max_memory // (peak[0] / first)))
    else:
        head = products(rows(0, first))
        chunk = chunk_size or n_rows
    out = np.empty((n_rows, head.shape[1]), head.dtype)
    out[:first] = head
    bar.update(first)
    starts = range(first, n_rows, chunk)
    try:
        if executor is None:
            for start in starts:
                stop = min(start + chunk, n_rows)
                out[start:stop] = products(rows(start, stop))
                bar.update(stop - start)
        else:
            _ensure_picklable(products, executor)
            futures = {executor.submit(products.fresh(), rows(s, min(s + chunk, n_rows))): s for s in starts}
            for future, start in futures.items():
                block = future.result()
                out[start:start + len(block)] = block
                bar.update(len(block))
    finally:
        bar.close()
    return out
