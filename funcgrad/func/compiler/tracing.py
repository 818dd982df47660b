"""Recording a call's NumPy work as a program that replays on new arrays: the machinery of ``jit``.

A traced call runs the function once, for real, on ``Traced`` arrays: NumPy duck arrays that hold
the concrete value and the slot of that value in the program being recorded. Every NumPy function,
ufunc, method and indexing applied to one is computed on the concrete values *and* appended to the
program as a step, so the library above (Tensors, the graph, the engine, forward mode) runs
unchanged and only its array work is kept. Replaying the program on new inputs of the same
shapes, dtypes and strides repeats that array work and nothing else.

What a replay cannot repeat is caught while recording:

- a *guard*: a traced value read into Python (``bool``, ``float``, ``item``, a NumPy function
  returning a Python value). Its step recomputes the value on replay and stops the replay
  (``GuardFailed``) if it differs, since the Python code after it may then take another path;
- a *shape guard*: the shape (``len``, ``size``, ...) of an array whose shape depends on values (a
  boolean mask's selection, ``nonzero``, ``unique``, ``repeat``..., and everything computed from one)
  read into Python. Shapes of other arrays follow from the input shapes, which a signature fixes;
- an *escape*: a traced value leaving NumPy's view (``np.asarray`` of it, SciPy's LAPACK wrappers,
  writing it into a plain array). The recording is then unusable (``Recorder.escape`` says why);
  the call's own result is still right, as every step was computed for real.

Arrays the function uses that are not derived from its inputs (closed-over data, ``np.ones``) are
*constants*: captured when first seen, as a read-only copy (a new one if the array has changed by
its next use), as ``jax.jit`` does; the recordings of one jitted function share these copies
(``Captures``).
"""
from __future__ import annotations

import hashlib
import operator
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from funcgrad.core.effects import listening
from funcgrad.core.structured import Structured, dense_copy
from funcgrad.func.compiler.program import Guard, Program, Slot

__all__ = ["Traced", "Recorder", "Captures", "active_recorder", "overlapping"]

# functions that read only shapes and dtypes: computed at once, no step, no guard
_STATIC_FUNCTIONS = frozenset({np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj})
# whether two arrays overlap follows from the steps that made them, as long as the arrays the program
# starts from (inputs, constants) do not overlap: then computed at once, like shapes
_ALIASING_FUNCTIONS = frozenset({np.may_share_memory, np.shares_memory})
# cheaper calls with the same result on plain ndarrays (np.sum and np.reshape are Python wrappers)
_EQUIVALENTS: dict[Any, tuple[Any, int, frozenset[str]]] = {  # func -> (equivalent, max positional, kwargs)
    np.sum: (np.add.reduce, 2, frozenset({"axis", "dtype", "out", "keepdims"})),
    np.reshape: (np.ndarray.reshape, 2, frozenset()),
    np.transpose: (np.ndarray.transpose, 2, frozenset()),
}
# a parameter whose default differs between a function and its equivalent: (position, name, the function's
# default); np.sum's axis is None (all axes), np.add.reduce's 0 (np.sum of a matrix became its column sums)
_EQUIVALENT_DEFAULTS: dict[Any, tuple[int, str, Any]] = {np.sum: (1, "axis", None)}
_STATIC_ATTRIBUTES = frozenset({"dtype", "ndim", "itemsize"})
# attributes that follow from the shape: static too, unless the shape depends on values (then guarded)
_SHAPE_ATTRIBUTES = frozenset({"shape", "size", "nbytes", "strides"})
# functions whose results' shapes depend on the values of the array they are given, not only on its shape
_VALUE_SHAPED_FUNCTIONS = frozenset({
    np.nonzero, np.flatnonzero, np.argwhere, np.extract, np.compress, np.unique, np.union1d, np.intersect1d,
    np.setdiff1d, np.setxor1d, np.trim_zeros, np.bincount, np.histogram, np.histogram_bin_edges, np.histogram2d,
    np.histogramdd,
    *(getattr(np, name) for name in ("unique_all", "unique_counts", "unique_inverse", "unique_values")
      if hasattr(np, name))})
# functions taking integer or boolean arrays besides their data whose results are shaped by those arrays' shapes
_INDEX_SHAPED_FUNCTIONS = frozenset({np.take, np.take_along_axis, np.choose, np.where, np.select, np.searchsorted,
                                     np.isin, np.put, np.put_along_axis, np.place, np.putmask, np.copyto})
_VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
_MUTATING_METHODS = frozenset({"fill", "sort", "put", "resize", "partition", "setfield", "itemset", "setflags"})
_MUTATING_FUNCTIONS = frozenset({np.copyto, np.put, np.place, np.putmask, np.fill_diagonal, np.put_along_axis})

class _Recordings(threading.local):
    """This thread's recordings in progress, innermost last."""

    def __init__(self) -> None:
        self.stack: list[Recorder] = []


_RECORDINGS = _Recordings()


def active_recorder() -> Recorder | None:
    """This thread's recording in progress (the innermost), if any."""
    stack = _RECORDINGS.stack
    return stack[-1] if stack else None


class Traced(Structured):
    """An array inside a recording: its concrete ``value`` and its ``slot`` in the recorder's program."""

    __slots__ = ("value", "slot", "recorder")
    _wraps_others = True  # mixed calls with other structured arrays come here first

    def __init__(self, value: Any, slot: int, recorder: Recorder) -> None:
        self.value, self.slot, self.recorder = value, slot, recorder

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        """The concrete value's shape (guarded when it depends on values)."""
        return self.recorder.read_shape(self, np.shape)  # type: ignore[no-any-return]

    @property
    def ndim(self) -> int:
        """The concrete value's number of dims (never depends on values)."""
        return np.ndim(self.value)

    @property
    def size(self) -> int:
        """The concrete value's number of elements (guarded when it depends on values)."""
        return self.recorder.read_shape(self, np.size)  # type: ignore[no-any-return]

    @property
    def dtype(self) -> np.dtype:
        """The concrete value's dtype."""
        return self.value.dtype

    def __repr__(self) -> str:
        return f"Traced(shape={self.shape}, dtype={self.dtype})"

    def __len__(self) -> int:
        return self.recorder.read_shape(self, len)  # type: ignore[no-any-return]

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    # ----- the NumPy protocols: every call is recorded -------------------------------------------
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        fn = ufunc if method == "__call__" else getattr(ufunc, method)
        return self.recorder.call(fn, inputs, kwargs, mutates=0 if method == "at" else None)

    def __array_function__(self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if func in _SHAPE_FUNCTIONS and args and isinstance(args[0], Traced):
            return self.recorder.read_shape(args[0], func, *args[1:], **kwargs)
        if func in _STATIC_FUNCTIONS:
            return func(*_concrete(args), **_concrete(kwargs))
        if func in _ALIASING_FUNCTIONS:
            return self.recorder.aliasing(func, args, kwargs)
        equivalent = _EQUIVALENTS.get(func)
        if equivalent is not None and len(args) <= equivalent[1] and equivalent[2].issuperset(kwargs) \
                and type(_concrete(args[0])) is np.ndarray:
            default = _EQUIVALENT_DEFAULTS.get(func)
            if default is not None and len(args) <= default[0] and default[1] not in kwargs:
                kwargs = {**kwargs, default[1]: default[2]}
            func = equivalent[0]
        return self.recorder.call(func, args, kwargs, mutates=0 if func in _MUTATING_FUNCTIONS else None)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        self.recorder.escape("converted to a plain ndarray (np.asarray, np.array or a non-NumPy kernel)")
        value = np.array(self.value, copy=True) if copy else np.asarray(self.value)
        return value if dtype is None else value.astype(dtype, copy=False)

    def __getitem__(self, key: Any) -> Any:
        return self.recorder.call(operator.getitem, (self, key), {})

    def __setitem__(self, key: Any, value: Any) -> None:
        self.recorder.call(operator.setitem, (self, key, value), {}, mutates=0)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _STATIC_ATTRIBUTES:
            return getattr(self.value, name)
        if name in _SHAPE_ATTRIBUTES:
            return self.recorder.read_shape(self, _attribute(name))
        if name in _VIEW_ATTRIBUTES:
            return self.recorder.call(_attribute(name), (self,), {})
        if not callable(getattr(self.value, name)):
            self.recorder.escape(f"its attribute '{name}' was read", steps_complete=True)
            return getattr(self.value, name)
        return lambda *args, **kwargs: self.recorder.call(
            _method(name), (self, *args), kwargs, mutates=0 if name in _MUTATING_METHODS else None)

    def reshape(self, *shape: Any) -> Any:
        """The reshaped array (recorded)."""
        return self.recorder.call(_method("reshape"), (self, *shape), {})

    def dense(self) -> Any:
        """A new dense array with the same values (recorded); a structured value is made dense."""
        return self.recorder.call(dense_copy, (self,), {})

    # ----- Python values: guarded ----------------------------------------------------------------
    def __bool__(self) -> bool:
        return self.recorder.call(bool, (self,), {})  # type: ignore[no-any-return]

    def __float__(self) -> float:
        return self.recorder.call(float, (self,), {})  # type: ignore[no-any-return]

    def __int__(self) -> int:
        return self.recorder.call(int, (self,), {})  # type: ignore[no-any-return]

    def __complex__(self) -> complex:
        return self.recorder.call(complex, (self,), {})  # type: ignore[no-any-return]

    def __index__(self) -> int:
        return self.recorder.call(operator.index, (self,), {})  # type: ignore[no-any-return]


_ATTRIBUTES: dict[str, Callable[[Any], Any]] = {}
_METHODS: dict[str, Callable[..., Any]] = {}


def _attribute(name: str) -> Callable[[Any], Any]:
    if name not in _ATTRIBUTES:
        _ATTRIBUTES[name] = operator.attrgetter(name)
    return _ATTRIBUTES[name]


def _method(name: str) -> Callable[..., Any]:
    """A function calling method ``name`` of its first argument (one per name, so steps compare)."""
    if name not in _METHODS:
        def call(obj: Any, *args: Any, **kwargs: Any) -> Any:
            return getattr(obj, name)(*args, **kwargs)
        call.__name__ = call.__qualname__ = f"ndarray.{name}"
        _METHODS[name] = call
    return _METHODS[name]


_VALUE_SHAPED_METHODS = frozenset(_method(name) for name in ("nonzero", "compress"))
_SHAPE_FUNCTIONS = frozenset({np.shape, np.size})


def _traced_in(value: Any) -> list[Traced]:
    """The Traced arrays in ``value`` (also inside lists, tuples, dicts and slices)."""
    if isinstance(value, Traced):
        return [value]
    if isinstance(value, list | tuple):
        return [t for v in value for t in _traced_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _traced_in(v)]
    if isinstance(value, slice):
        return _traced_in((value.start, value.stop, value.step))
    return []


def _concrete(value: Any) -> Any:
    """``value`` with every Traced (also inside lists, tuples and dicts) replaced by its concrete value."""
    if isinstance(value, Traced):
        return value.value
    if isinstance(value, list | tuple):
        return type(value)(_concrete(v) for v in value)
    if isinstance(value, dict):
        return {k: _concrete(v) for k, v in value.items()}
    return value


def _known_or(known: Traced | None, value: Any, new: Callable[[Any], Traced]) -> Traced:
    return known if known is not None and known.value is value else new(value)


def _is_value(value: Any) -> bool:
    """True for what a program holds in a slot: arrays (also structured ones) and NumPy scalars."""
    return isinstance(value, np.ndarray | Structured | np.generic)


class Captures:
    """Read-only copies of captured arrays, shared by the recordings of one jitted function: an array it
    closes over (or builds afresh on every call, as ``tensor(W)`` does) is copied once for all its
    signatures. A copy is found by its array or by its contents; held weakly, so it lives as long as a
    kept recording uses it."""

    def __init__(self) -> None:
        self._by_owner: dict[int, tuple[weakref.ref[np.ndarray], weakref.ref[np.ndarray]]] = {}
        self._by_contents: dict[tuple[Any, ...], weakref.ref[np.ndarray]] = {}
        self._lock = threading.Lock()

    def copy_of(self, owner: np.ndarray) -> tuple[np.ndarray, bool]:
        """A read-only copy of ``owner`` as it is now, and whether it was made just now."""
        with self._lock:
            entry = self._by_owner.get(id(owner))
            if entry is not None:
                copied = entry[1]()
                if entry[0]() is owner and copied is not None and _unchanged(owner, copied):
                    return copied, False
            key = (owner.dtype.str, owner.shape, owner.strides,
                   hashlib.blake2b(owner.tobytes(order="A"), digest_size=16).digest())
            found = self._by_contents.get(key)
            copied = found() if found is not None else None
            fresh = copied is None or not _unchanged(owner, copied)
            if fresh:
                copied = owner.copy(order="K")  # the same strides when the owner is contiguous in some order
                copied.flags.writeable = False
                self._by_contents[key] = weakref.ref(copied)
            self._by_owner[id(owner)] = (weakref.ref(owner), weakref.ref(copied))  # type: ignore[arg-type]
            return copied, fresh  # type: ignore[return-value]

    def forget_unused(self) -> None:
        """Drop the entries of copies no kept recording uses any more."""
        with self._lock:
            self._by_owner = {k: e for k, e in self._by_owner.items() if e[0]() is not None and e[1]() is not None}
            self._by_contents = {k: ref for k, ref in self._by_contents.items() if ref() is not None}

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._by_owner.clear()
            self._by_contents.clear()


class Recorder:
    """The program being recorded by one traced call.

    Args:
        inputs: the call's input arrays; they take slots ``0 .. len(inputs) - 1``.
        captures: where captured arrays are copied (shared between recordings of one function); default:
            copies of this recording's own.
    """

    def __init__(self, inputs: Sequence[np.ndarray], captures: Captures | None = None) -> None:
        self.steps: list[tuple[Any, ...]] = []  # (fn, args template, kwargs template, output, mutated slot)
        self.constants: dict[int, Any] = {}     # slot -> captured value
        self.escaped: str | None = None
        self.failed_write: Exception | None = None  # the error of a recorded write, if one raised
        self.steps_complete = True  # every array the results come from is computed by a recorded step
        self.closed = False
        self._seen: dict[int, tuple[Any, int, Any]] = {}  # id -> (array, slot, its capture): constants in use
        self._listening = listening(self._heard)  # hears of random draws while recording
        self._captures = captures if captures is not None else Captures()
        self._owners: set[int] = set()  # ids of the arrays owning captured memory, noted as roots
        self.n_slots = len(inputs)
        self.inputs = [Traced(a, i, self) for i, a in enumerate(inputs)]
        self._roots = list({id(a): a for a in inputs}.values())  # the arrays the program starts from
        self.roots_overlap = overlapping(self._roots)
        self.aliasing_read = False
        self.value_shaped: set[int] = set()  # slots whose shapes depend on values, not only on input shapes

    def __enter__(self) -> Recorder:
        _RECORDINGS.stack.append(self)
        self._listening.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listening.__exit__(None, None, None)
        _RECORDINGS.stack.remove(self)
        self.closed = True

    def _heard(self, what: str) -> None:
        """An effect a replay cannot repeat (``funcgrad.core.effects``): the recording is unusable."""
        if self.escaped is None:
            self.escaped = f"the function {what}"

    def escape(self, why: str, steps_complete: bool = False) -> None:
        """Mark the recording unusable for replay (the first reason is kept). ``steps_complete``: the steps
        still show every array the results are computed from (a Python read of an attribute, an aliasing
        question); otherwise some of that work happened outside the recording."""
        if self.escaped is None:
            self.escaped = f"a traced array was {why}"
        self.steps_complete = self.steps_complete and steps_complete

    def aliasing(self, func: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """``func`` (``np.may_share_memory``, ``np.shares_memory``) computed at once: a replay's arrays
        overlap as the recording's did, unless the arrays it started from overlapped (then not usable)."""
        self.aliasing_read = True
        if self.roots_overlap:
            self.escape("asked whether it shares memory while inputs or captured arrays overlap each other",
                        steps_complete=True)
        return func(*_concrete(tuple(args)), **_concrete(kwargs))

    def read_shape(self, traced: Traced, read: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``read(value, *args, **kwargs)``, a fact that follows from the shape (shape, size, len...): guarded
        when the shape depends on values, since the Python code that reads it may do other work for another
        shape."""
        if traced.slot in self.value_shaped and not self.closed and traced.recorder is self:
            return self.call(read, (traced, *args), kwargs)
        return read(traced.value, *args, **kwargs)

    def _shape_follows_values(self, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
        """Whether ``fn(*args, **kwargs)``'s result shape may depend on values: a value-shaped function
        (``nonzero``, ``unique``...), a boolean-mask index or ``np.where(condition)``, an argument whose own shape
        depends on values, or an integer or boolean array given besides the data (``np.repeat(x, counts)``,
        ``np.reshape(x, sizes)``, ``np.pad(x, widths)``) to anything but a ufunc or an index-shaped function.
        Marking too much costs a replay only guards that hold."""
        if fn in _VALUE_SHAPED_FUNCTIONS or fn in _VALUE_SHAPED_METHODS or (fn is np.where and len(args) == 1):
            return True
        if any(t.slot in self.value_shaped for t in _traced_in((args, kwargs))):
            return True
        if fn is operator.getitem:
            return any(t.value.dtype == bool for t in _traced_in(args[1:]))
        if fn in _INDEX_SHAPED_FUNCTIONS or isinstance(fn, np.ufunc) or isinstance(getattr(fn, "__self__", None),
                                                                                   np.ufunc):
            return False
        return any(np.result_type(t.value).kind in "biu" for t in _traced_in((args[1:], kwargs)))

    def call(self, fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any],
             mutates: int | None = None) -> Any:
        """Compute ``fn(*args, **kwargs)`` on concrete values and record it; Traced results.

        ``mutates``: the position of an argument the call writes into (besides any ``out=``).
        """
        if self.closed:
            raise RuntimeError("an array traced inside a jit-compiled call was used after the call returned "
                               "(it was stored outside the function); return it from the function instead")
        out = kwargs.get("out")
        targets = list(out) if isinstance(out, tuple) else [] if out is None else [out]
        if mutates is not None:
            targets.append(args[mutates])
        if any(not isinstance(t, Traced) for t in targets):
            self.escape("written into an array created outside the traced computation")
        writes = bool(targets)
        template = (self._template(list(args)), self._template(dict(kwargs)))
        try:
            result = fn(*_concrete(tuple(args)), **_concrete(kwargs))
        except Exception as error:  # if the function goes on (catching it), a replay must raise it too
            self.steps.append((fn, *template, Guard(type(error), raised=True), writes))
            if writes:  # perhaps only because a traced view is read-only where the plain one is not
                self.failed_write = error
            raise
        known = {id(a.value): a for a in (*args, *targets) if isinstance(a, Traced)}
        if isinstance(result, tuple | list) and result and all(_is_value(r) for r in result):
            outputs = [_known_or(known.get(id(r)), r, self._traced) for r in result]
            self.steps.append((fn, *template, tuple(t.slot for t in outputs), writes))
            if self._shape_follows_values(fn, args, kwargs):
                self.value_shaped.update(t.slot for t in outputs)
            return type(result)(*outputs) if hasattr(result, "_fields") else type(result)(outputs)
        if _is_value(result):
            same = known.get(id(result))
            if same is not None and same.value is result:
                if writes:  # the written argument itself (out=, in place)
                    self.steps.append((fn, *template, same.slot, writes))
                return same  # else an argument returned as it is (astype(copy=False)): no step
            traced = self._traced(result)
            self.steps.append((fn, *template, traced.slot, writes))
            if self._shape_follows_values(fn, args, kwargs):
                self.value_shaped.add(traced.slot)
            return traced
        # a Python value, guarded; or None from a call that writes in place
        self.steps.append((fn, *template, Guard(result) if result is not None else None, writes))
        return result

    def _traced(self, value: Any) -> Traced:
        self.n_slots += 1
        return Traced(value, self.n_slots - 1, self)

    def _template(self, value: Any) -> Any:
        """``value`` with arrays replaced by slots (constants captured on the way)."""
        if isinstance(value, Traced):
            if value.recorder is not self:
                raise RuntimeError("an array traced by another jit-compiled call was used here; pass it in "
                                   "as an argument instead of closing over it")
            return Slot(value.slot)
        if isinstance(value, np.ndarray):
            return Slot(self._constant(value))
        if isinstance(value, Structured):
            return Slot(self._constant(value))
        if isinstance(value, list | tuple):
            return type(value)(self._template(v) for v in value)
        if isinstance(value, dict):
            return {k: self._template(v) for k, v in value.items()}
        if hasattr(value, "__array__") and not isinstance(value, np.generic | type):
            self.escape(f"used with a {type(value).__name__}, which NumPy reads through __array__")
        return value

    def _constant(self, array: Any) -> int:
        """The slot of a captured array: read-only copies, views of one copy for views of one array."""
        seen = self._seen.get(id(array))
        if seen is not None and seen[0] is array and (isinstance(array, Structured) or _unchanged(array, seen[2])):
            return seen[1]  # (a structured stack is never written to: it is the same as when first seen)
        captured = self._capture_structured(array) if isinstance(array, Structured) else self._capture(array)
        self.n_slots += 1
        self._seen[id(array)] = (array, self.n_slots - 1, captured)
        self.constants[self.n_slots - 1] = captured
        return self.n_slots - 1

    def _capture(self, array: np.ndarray) -> np.ndarray:
        """A read-only copy of ``array``: a view of the copy of the array that owns its memory, so captured
        views of one array overlap as the originals do."""
        owner = array
        while isinstance(owner.base, np.ndarray):
            owner = owner.base
        copied, fresh = self._captures.copy_of(owner)
        if fresh or id(owner) not in self._owners:
            self._owners.add(id(owner))
            self._note_root(owner)
        if array is owner:
            return copied
        if copied.strides != owner.strides or min(owner.strides, default=0) < 0:  # (rare) copied on its own
            self._note_root(array, overlaps=True)
            view = array.copy()
            view.flags.writeable = False
            return view
        memory = copied.ravel(order="K").view(np.uint8)
        offset = array.__array_interface__["data"][0] - owner.__array_interface__["data"][0]
        return np.ndarray(array.shape, array.dtype, memory, offset, array.strides)

    def _capture_structured(self, stack: Structured) -> Structured:
        """The same structured stack over captured copies of its arrays."""
        captured = object.__new__(type(stack))
        for name in (n for cls in type(stack).__mro__ for n in getattr(cls, "__slots__", ())):
            field = getattr(stack, name)
            if isinstance(field, Traced):
                self.escape("held by a structured array built outside the recording")
            setattr(captured, name, self._capture(field) if isinstance(field, np.ndarray) else field)
        return captured

    def _note_root(self, array: np.ndarray, overlaps: bool = False) -> None:
        if not self.roots_overlap:
            self.roots_overlap = overlaps or overlapping([array, *self._roots])
            if self.roots_overlap and self.aliasing_read:
                self.escape("asked whether it shares memory while inputs or captured arrays overlap each other",
                            steps_complete=True)
        self._roots.append(array)

    def program(self, outputs: Sequence[Any]) -> Program:
        """The recorded program, pruned to what ``outputs`` (Traced or constants) and guards need."""
        out_slots = [self._template(o) for o in outputs]
        return Program(self.n_slots, len(self.inputs), self.constants, self.steps, out_slots)


def overlapping(arrays: Sequence[np.ndarray]) -> bool:
    """True if any two of ``arrays`` (distinct objects) may share memory."""
    return any(np.may_share_memory(a, b) for i, a in enumerate(arrays) for b in arrays[i + 1:])


def _unchanged(array: np.ndarray, snapshot: np.ndarray) -> bool:
    return array.shape == snapshot.shape and array.dtype == snapshot.dtype and bool(
        np.array_equal(array, snapshot, equal_nan=array.dtype.kind in "fc"))
