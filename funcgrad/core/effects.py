"""Effects a recording of array work cannot repeat: draws from funcgrad's random generators.

Code that has such an effect calls ``note_effect``; a recording in progress (``jit``'s, in
``funcgrad.func.compiler``) listens while it records, and then keeps no recording, so the function
runs for real at every call instead of replaying the first call's draws (a dropout mask frozen for
a whole training loop). The listeners belong to the thread that installs them.
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["note_effect", "listening"]


class _Listeners(threading.local):
    """This thread's listeners, innermost last."""

    def __init__(self) -> None:
        self.stack: list[Callable[[str], None]] = []


_LISTENERS = _Listeners()


def note_effect(what: str) -> None:
    """Tell this thread's listeners that ``what`` happened (e.g. ``"drew random numbers"``)."""
    for listener in _LISTENERS.stack:
        listener(what)


@contextmanager
def listening(listener: Callable[[str], None]) -> Iterator[None]:
    """Call ``listener(what)`` for every effect this thread notes inside the block."""
    _LISTENERS.stack.append(listener)
    try:
        yield
    finally:
        _LISTENERS.stack.remove(listener)
