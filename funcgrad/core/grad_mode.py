"""Grad modes: whether operations record a backward graph, per thread.

Each mode is a context manager and a decorator, as in PyTorch. This module only keeps the flag;
the op registry and the engine read it.
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled"]

F = TypeVar("F", bound=Callable[..., Any])


class _ThreadState(threading.local):
    """Per-thread autograd flags; a new thread starts with grad mode on."""

    grad_enabled: bool = True
    inference: bool = False


STATE = _ThreadState()


def is_grad_enabled() -> bool:
    """Return True if operations on tensors that require grad currently record a graph."""
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """Return True inside ``inference_mode()``."""
    return STATE.inference


class _Mode:
    """Base of the grad-mode context managers: set the flags on enter, restore them on exit."""

    _grad: bool | None = None
    _inference: bool | None = None

    def __enter__(self) -> None:
        self._saved = (STATE.grad_enabled, STATE.inference)
        if self._grad is not None:
            STATE.grad_enabled = self._grad
        if self._inference is not None:
            STATE.inference = self._inference

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled, STATE.inference = self._saved

    def __call__(self, fn: F) -> F:
        """Use the mode as a decorator: ``fn`` runs inside a fresh copy of this mode (a generator function:
        each of its steps does, and the caller's mode holds between them, as torch)."""
        if inspect.isgeneratorfunction(fn):
            return _generator_in_mode(self._clone, fn)  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _clone(self) -> _Mode:
        return self.__class__()


def _generator_in_mode(mode: Callable[[], _Mode], fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, a generator function, with every step (start, ``send``, ``throw``, ``close``) run inside ``mode()``."""

    @functools.wraps(fn)
    def generator(*args: Any, **kwargs: Any) -> Any:
        steps = fn(*args, **kwargs)
        try:
            with mode():
                response = steps.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with mode():
                        steps.close()
                    raise
                except BaseException:
                    with mode():
                        response = steps.throw(sys.exc_info()[1])
                else:
                    with mode():
                        response = steps.send(request)
        except StopIteration as stop:
            return stop.value

    return generator


class _NoArgMode(_Mode):
    """A mode taking no argument, so it also decorates bare (``@no_grad`` as well as ``@no_grad()``)."""

    def __new__(cls, fn: Callable[..., Any] | None = None) -> Any:
        return super().__new__(cls) if fn is None else cls()(fn)


class no_grad(_NoArgMode):
    """Disable graph recording: results of operations do not require grad.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.tensor([1.0], requires_grad=True)
        >>> with fg.no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    _grad = False


class enable_grad(_NoArgMode):
    """Enable graph recording, e.g. inside a ``no_grad`` block."""

    _grad = True


class set_grad_enabled(_Mode):
    """Set grad mode on or off; acts at once when called, and as a context manager restores it.

    Args:
        mode: True to record graphs, False not to.
    """

    def __init__(self, mode: bool) -> None:
        if type(mode) is not bool:
            kind = type(mode)
            name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
            raise TypeError(f"set_grad_enabled(): argument 'mode' (position 1) must be bool, not {name}")
        self._grad = mode
        self._prev = (STATE.grad_enabled, STATE.inference)
        STATE.grad_enabled = self._grad

    def __enter__(self) -> None:
        self._saved = self._prev

    def __call__(self, fn: F) -> F:
        # used as a decorator, the mode applies inside fn only, not from decoration on (as torch)
        STATE.grad_enabled, STATE.inference = self._prev
        return super().__call__(fn)

    def _clone(self) -> _Mode:
        return set_grad_enabled(bool(self._grad))


class inference_mode(_Mode):
    """Like ``no_grad``, for code that will never need gradients of what it computes.

    Args:
        mode: True (default) to enter inference mode, False to make this a no-op.
    """

    def __new__(cls, mode: Any = True) -> Any:
        if callable(mode):  # bare ``@inference_mode``
            return cls(True)(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True) -> None:
        self._mode = mode
        if mode:
            self._grad, self._inference = False, True

    def _clone(self) -> _Mode:
        return inference_mode(self._mode)
