"""A recorded program: the steps a traced call took, replayed on new arrays (see ``funcgrad.func.compiler.tracing``).

A step is a function, its argument templates (``Slot`` for a program value, anything else a literal)
and where its result goes: a slot, a tuple of slots, nothing (a call writing in place), or a ``Guard``
(a Python value the replay must meet again). Steps compile to small closures over the environment,
the list of slot values, so a replay costs little more than the NumPy calls themselves.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Program", "Slot", "Guard", "GuardFailed", "slots_in"]


class GuardFailed(Exception):
    """A replay met a Python value that differs from the recorded one: the program does not apply."""


class Slot:
    """A reference to a program value in a step's argument template."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


class Guard:
    """The output marker of a step whose result is a Python value (the value it must have on replay), or
    of a call that raised while recording (``raised``: it must raise the same on replay)."""

    __slots__ = ("value", "raised")

    def __init__(self, value: Any, raised: bool = False) -> None:
        self.value, self.raised = value, raised

    def holds(self, value: Any) -> bool:
        """True if ``value`` is the recorded value (same type, equal)."""
        if self.raised:
            return False
        try:
            return type(value) is type(self.value) and bool(value == self.value)
        except (TypeError, ValueError):
            return False

    def describe(self) -> str:
        """What was recorded, for messages."""
        return f"raised {self.value.__name__}" if self.raised else f"gave {self.value!r}"


class Program:
    """A recorded program: ``run(inputs)`` repeats its steps on new input arrays.

    Steps nothing needs (no output depends on them, they write nothing and guard nothing) are dropped.
    """

    def __init__(self, n_slots: int, n_inputs: int, constants: dict[int, Any], steps: list[tuple[Any, ...]],
                 outputs: list[Any]) -> None:
        needed = {s.index for s in slots_in(outputs)}
        kept = []
        for step in reversed(steps):
            fn, args, kwargs, out, writes = step
            produced = out if isinstance(out, tuple) else (out,) if isinstance(out, int) else ()
            if writes or isinstance(out, Guard) or needed.intersection(produced):
                kept.append(step)
                needed.update(s.index for s in slots_in((args, kwargs)))
        kept.reverse()
        self.n_inputs = n_inputs
        self.initial: list[Any] = [None] * n_slots
        for slot, value in constants.items():
            if slot in needed:
                self.initial[slot] = value
        self.steps = [_compile(*step) for step in kept]
        self.outputs = outputs
        self.calls = [step[0] for step in kept]
        """The functions the program calls, in order (ufuncs, NumPy functions, methods)."""

    def run(self, inputs: Sequence[Any]) -> list[Any]:
        """The outputs for ``inputs``; raises ``GuardFailed`` where the recorded path does not apply."""
        env = self.initial.copy()
        env[:self.n_inputs] = inputs
        for step in self.steps:
            step(env)
        return [_build(o, env) for o in self.outputs]


def slots_in(template: Any) -> list[Slot]:
    """The slots a step's argument template refers to."""
    if isinstance(template, Slot):
        return [template]
    if isinstance(template, list | tuple):
        return [s for t in template for s in slots_in(t)]
    if isinstance(template, dict):
        return [s for t in template.values() for s in slots_in(t)]
    return []


def _build(template: Any, env: list[Any]) -> Any:
    if type(template) is Slot:
        return env[template.index]
    if isinstance(template, list | tuple):
        return type(template)(_build(t, env) for t in template)
    if isinstance(template, dict):
        return {k: _build(t, env) for k, t in template.items()}
    return template


def _compile(fn: Callable[..., Any], args: list[Any], kwargs: dict[str, Any], out: Any,
             writes: bool) -> Callable[[list[Any]], None]:
    """One step as a function of the environment; the common shapes of call get a direct form."""
    del writes
    flat = all(type(a) is Slot for a in args) and not kwargs
    if isinstance(out, int) and flat and len(args) == 1:
        (a,) = (s.index for s in args)

        def unary(env: list[Any]) -> None:
            env[out] = fn(env[a])
        return unary
    if isinstance(out, int) and flat and len(args) == 2:
        a, b = (s.index for s in args)

        def binary(env: list[Any]) -> None:
            env[out] = fn(env[a], env[b])
        return binary

    def general(env: list[Any]) -> None:
        try:
            result = fn(*_build(args, env), **_build(kwargs, env))
        except Exception as error:
            if isinstance(out, Guard) and out.raised and type(error) is out.value:
                return  # raised as when recorded: the recorded code went on from there
            raise
        if isinstance(out, int):
            env[out] = result
        elif isinstance(out, tuple):
            for slot, r in zip(out, result):
                env[slot] = r
        elif isinstance(out, Guard) and not out.holds(result):
            name = getattr(fn, "__name__", fn)
            raise GuardFailed(f"{name} gave {result!r} where, when recorded, it {out.describe()}")
    return general
