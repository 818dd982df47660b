"""``jit``: run a function's array work without its Python, as ``jax.jit`` does (funcgrad's take on it).

The first call with a given *signature* (the argument tree, each array's shape, dtype and strides,
the other arguments' values, and the grad mode) runs the function once while recording the NumPy
work it does, including every derivative the library computes inside it (``funcgrad.tracing``).
Later calls with that signature replay the recording on the new arrays: no Tensors, no graph, no
dispatch, only the NumPy calls (minus those no output needs). This is what makes small
derivative workloads (a Hessian-vector product, a Jacobian) cost close to the hand-written
NumPy they amount to.

What a recording cannot reproduce, it does not: a function that reads input values into Python
(``if x.sum() > 0``), or the shape of an array whose shape depends on values (``len(x[x > 0])``,
``np.unique(x).shape``), gets those reads guarded, and a replay that meets a different value runs the
function normally instead (with a warning, once); a function whose arrays leave NumPy (SciPy's
LAPACK wrappers, ``np.asarray`` of a traced array) or that writes into its inputs is not recorded
and always runs normally. Every call's result is exactly what calling the function gives, except for what it
reads from outside its arguments: closed-over arrays and Python state are fixed when a signature is recorded
(as ``jax.jit``'s), and a replay does not see later changes to them (pass them as arguments, or
``clear_cache()``).
"""
from __future__ import annotations

import functools
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import numpy as np

from funcgrad.core.dispatch import DISPATCH
from funcgrad.core.grad_mode import is_grad_enabled
from funcgrad.core.tensor import Tensor
from funcgrad.func.compiler.program import GuardFailed, Program
from funcgrad.func.compiler.tracing import Captures, Recorder, Traced, active_recorder
from funcgrad.functional._pytree import tree_flatten, tree_unflatten

__all__ = ["jit"]

_NOT_RECORDED = "not recorded"


def jit(f: Callable[..., Any], *, cache_size: int = 32) -> Callable[..., Any]:
    """``f`` compiled to a replay of its NumPy work, recorded on the first call of each signature.

    Args:
        f: a function of arrays (pytrees of NumPy arrays, Tensors that do not require grad, Python
            scalars) returning arrays, Tensors or Python values; it may differentiate inside
            (``jit(grad(f))``, ``jit(lambda x, v: functional.hvp(f, x, v))``). Non-array arguments are
            part of the signature: each new value records anew.
        cache_size: how many signatures' recordings are kept; recording one more drops the least
            recently called. Arrays ``f`` closes over are captured once for all of them.

    Returns:
        A function with ``f``'s signature and results (Tensors come back as Tensors without history).
        Side effects of ``f`` (printing, appending to lists) happen when a call is recorded, not when it
        replays; arrays ``f`` closes over are captured at recording (pass them as arguments to vary them);
        NumPy's random draws inside ``f`` are recorded as constants, but a draw from funcgrad's generators
        (``rand``, ``randn``, a dropout mask in training mode) leaves ``f`` unrecorded, so every call draws
        anew (a seeded ``rand(..., seed=s)`` is a constant and records); a replay runs under the caller's NumPy
        error state (``np.errstate`` set inside ``f`` is not replayed). ``jitted.programs`` maps each signature
        kept to its ``Program`` (or to ``"not recorded"`` and the reason); ``jitted.clear_cache()`` drops
        them all (and the captured arrays). A call that raises runs ``f`` once and raises its error.

    Example:
        >>> import numpy as np
        >>> import funcgrad.func as ff
        >>> g = ff.jit(ff.grad(lambda x: (x ** 3).sum()))
        >>> g(np.array([1.0, 2.0]))
        array([ 3., 12.])
        >>> g(np.array([3.0, 0.5]))
        array([27.  ,  0.75])
    """
    if cache_size < 1:
        raise ValueError(f"jit: cache_size must be at least 1, got {cache_size}")
    programs: OrderedDict[Any, Any] = OrderedDict()  # least recently called first
    captures = Captures()  # the arrays f closes over, copied once for every signature's recording
    lock = threading.Lock()  # calls from several threads share the cache
    warned: list[bool] = []

    def recall(key: Any) -> Any:
        with lock:
            program = programs.get(key)
            if program is not None:
                programs.move_to_end(key)
            return program

    def keep(key: Any, program: Any) -> None:
        with lock:
            programs[key] = program
            programs.move_to_end(key)
            while len(programs) > cache_size:
                programs.popitem(last=False)
            captures.forget_unused()

    def clear_cache() -> None:
        """Drop every recording and captured array: the next call of each signature records anew."""
        with lock:
            programs.clear()
            captures.clear()

    @functools.wraps(f)
    def jitted(*args: Any, **kwargs: Any) -> Any:
        if DISPATCH.layers or active_recorder() is not None:
            return f(*args, **kwargs)  # under a profiler, anomaly mode or forward AD, or inside another recording
        leaves, tree = tree_flatten((args, kwargs))
        arrays, key = _signature(leaves, tree)
        program = recall(key)
        if program is None:
            program, result = _record(f, args, kwargs, leaves, tree, arrays, captures)
            keep(key, program)
            return result
        if not isinstance(program, _Compiled):
            return f(*args, **kwargs)
        try:
            return program.run(arrays)
        except GuardFailed as failure:
            why = f"{failure}; the function read a value of its inputs into Python while it was recorded, so " \
                  "calls where that value differs run without the recording. Keep value-dependent Python out " \
                  "of jitted functions."
        except Exception as error:  # the plain call raises its own error, or handles what the replay met
            why = f"the replay raised {error!r}, so the call ran without the recording"
        result = f(*args, **kwargs)
        if not warned:
            warned.append(True)
            warnings.warn(f"jit({getattr(f, '__name__', 'f')}): {why}", RuntimeWarning, stacklevel=2)
        return result

    jitted.programs = programs  # type: ignore[attr-defined]
    jitted.clear_cache = clear_cache  # type: ignore[attr-defined]
    return jitted


class _Compiled:
    """A recorded program plus how to rebuild ``f``'s result from its outputs."""

    __slots__ = ("program", "tree", "kinds")

    def __init__(self, program: Program, tree: Any, kinds: list[tuple[bool, bool]]) -> None:
        self.program, self.tree, self.kinds = program, tree, kinds

    def run(self, arrays: list[np.ndarray]) -> Any:
        values = self.program.run(arrays)
        return tree_unflatten(self.tree, [_export(v, kind) for v, kind in zip(values, self.kinds)])


def _export(value: Any, kind: tuple[bool, bool]) -> Any:
    """An output leaf as ``f`` returned it: a Tensor or not; a constant one copied (callers may write to it)."""
    tensor, constant = kind
    if constant and isinstance(value, np.ndarray):
        value = value.copy()
    return Tensor(value) if tensor else value


def _signature(leaves: list[Any], tree: Any) -> tuple[list[np.ndarray], Any]:
    """The call's input arrays, and the key its recording is filed under."""
    arrays: list[np.ndarray] = []
    parts: list[Any] = [tree, is_grad_enabled()]
    first: dict[int, int] = {}
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor):
            if leaf.requires_grad:
                raise TypeError(f"jit: argument leaf {i} is a Tensor that requires grad; a jitted call records no "
                                "graph. Differentiate inside the jitted function (jit(grad(f))), or pass "
                                "tensor.detach()")
            leaf = leaf.data
        if isinstance(leaf, np.ndarray):
            parts.append((type(leaf), leaf.shape, leaf.dtype.str, leaf.strides, first.setdefault(id(leaf), i)))
            arrays.append(leaf)
            continue
        try:
            hash(leaf)
        except TypeError:
            raise TypeError(f"jit: argument leaf {i} is a {type(leaf).__name__}, which is neither an array nor "
                            "hashable; pass arrays, Tensors or hashable values (close over anything else)") from None
        parts.append((type(leaf), leaf))
    return arrays, tuple(parts)


def _record(f: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], leaves: list[Any], tree: Any,
            arrays: list[np.ndarray], captures: Captures) -> tuple[Any, Any]:
    """Run ``f`` once while recording: ``(the compiled call or why not, f's result)``; raises what ``f``
    raises (having run it once)."""
    before = [a.copy() for a in arrays]
    with Recorder(arrays, captures) as recorder:
        traced = iter(recorder.inputs)
        call_leaves = [(Tensor(next(traced)) if isinstance(leaf, Tensor) else next(traced))
                       if isinstance(leaf.data if isinstance(leaf, Tensor) else leaf, np.ndarray) else leaf
                       for leaf in leaves]
        traced_args, traced_kwargs = tree_unflatten(tree, call_leaves)
        try:
            out = f(*traced_args, **traced_kwargs)
        except Exception as error:
            if recorder.escaped is None and error is not recorder.failed_write:
                raise  # every step ran for real on the call's values: f's own error, and f ran once
            # perhaps only because of what left the recording (or a write): the plain call says
            return (_NOT_RECORDED, f"the recorded call raised {error!r}"), f(*args, **kwargs)
    out_leaves, out_tree = tree_flatten(out)
    values = [leaf.data if isinstance(leaf, Tensor) else leaf for leaf in out_leaves]
    result = tree_unflatten(out_tree, [_concrete_leaf(leaf) for leaf in out_leaves])
    if any(not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") for a, b in zip(arrays, before)):
        recorder.escape("written into: the function changes its inputs in place")
    if recorder.escaped is not None:
        return (_NOT_RECORDED, recorder.escaped), result
    kinds = [(isinstance(leaf, Tensor), not isinstance(v, Traced)) for leaf, v in zip(out_leaves, values)]
    return _Compiled(recorder.program(values), out_tree, kinds), result


def _concrete_leaf(leaf: Any) -> Any:
    if isinstance(leaf, Tensor):
        data = leaf.data
        return Tensor(data.value) if isinstance(data, Traced) else leaf.detach()
    return leaf.value if isinstance(leaf, Traced) else leaf
