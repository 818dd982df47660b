"""Grad modes: whether operations record a backward graph, per thread.

Each mode is a context manager and a decorator, as in PyTorch. This module keeps the flags (the op
registry and the engine read them) and makes what ops compute in inference mode *inference tensors*:
their version counter is ``NO_VERSION``, which autograd cannot read, as torch's inference tensors have
none (so saving one for backward raises, and writing one in place outside inference mode does).
"""
from __future__ import annotations

import functools
import inspect
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from funcgrad.core import dispatch

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode", "is_grad_enabled",
           "is_inference_mode_enabled", "NO_VERSION", "check_inference_inplace"]

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


class _NoVersion(list):  # type: ignore[type-arg]
    """The version counter of inference tensors: reading it means saving one for backward, which PyTorch refuses."""

    def __getitem__(self, index: Any) -> Any:
        raise RuntimeError("Inference tensors cannot be saved for backward. Please do not use Tensors created in "
                           "inference mode in computation tracked by autograd. To work around this, you can make a "
                           "clone to get a normal tensor and use it in autograd, or use `funcgrad.no_grad()` instead "
                           "of `funcgrad.inference_mode()`.")


NO_VERSION = _NoVersion([0])


def check_inference_inplace() -> None:
    """Raise PyTorch's error for an in-place change of an inference tensor, unless in inference mode."""
    if not STATE.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.See "
                           "https://github.com/pytorch/rfcs/pull/17 for more details.")


def _make_inference(out: Any) -> None:
    """Make a tensor an op computed in inference mode an inference tensor (a view keeps its base's kind)."""
    if hasattr(out, "_version_counter") and (out._extra is None or out._extra.base is None):
        out._version_counter = NO_VERSION


class _InferenceLayer(dispatch.Layer):
    """Installed while some thread is in inference mode: what ops compute there becomes inference tensors."""

    def op(self, spec: Any, proceed: Callable[[tuple[Any, ...], dict[str, Any]], Any], args: tuple[Any, ...],
           kwargs: dict[str, Any]) -> Any:
        out = proceed(args, kwargs)
        if STATE.inference:
            for o in out if type(out) is tuple else (out,):
                _make_inference(o)
        return out


class _InferenceUsers:
    """How many inference-mode blocks are open (in any thread): the layer is installed while there are some."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()
        self.layer = _InferenceLayer()

    def enter(self) -> None:
        with self.lock:
            self.count += 1
            if self.count == 1:
                dispatch.push(self.layer)

    def exit(self) -> None:
        with self.lock:
            self.count -= 1
            if self.count == 0:
                dispatch.pop(self.layer)


_INFERENCE_USERS = _InferenceUsers()


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

    def __enter__(self) -> None:
        super().__enter__()
        if self._mode:
            _INFERENCE_USERS.enter()

    def __exit__(self, *exc: object) -> None:
        if self._mode:
            _INFERENCE_USERS.exit()
        super().__exit__(*exc)

    def _clone(self) -> _Mode:
        return inference_mode(self._mode)
