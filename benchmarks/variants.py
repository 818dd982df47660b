"""Workloads comparing ways to call a framework's transforms (jacobian, hessian, hvp, gradcheck, ...).

A workload states its function once, against a math namespace ``m`` (funcgrad or torch), and a few
*calls*, each written once for both frameworks through an :class:`Api`: ``api.functional`` is
``funcgrad.functional`` or ``torch.autograd.functional``, ``api.func`` is ``funcgrad.func`` or
``torch.func``. Every call becomes a funcgrad row (``fg <kind>``) and a torch row (``torch <kind>``);
the funcgrad row the targets are about is labelled ``funcgrad``. A hand-written NumPy limit, when
given, is the ``numpy`` row every other row must agree with.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmarks.frameworks import Problem, installed
from benchmarks.harness import Runner, Sizes, Target, Workload

Call = Callable[..., Any]
"""``call(api, f, *args)``: one framework's result (a tensor, array or bool) for the single-input ``f``."""
Setup = Callable[..., Problem]
"""``setup(rng, **sizes)`` returns ``(constants, args)``: the constants ``f`` closes over, then the call's arguments."""


@dataclass(frozen=True)
class Api:
    """One framework's names for what the calls use."""

    m: Any
    """The math namespace the function is written against (``funcgrad`` or ``torch``)."""
    tensor: Callable[[np.ndarray], Any]
    functional: Any
    func: Any
    gradcheck: Callable[..., bool]
    numpy: Callable[[Any], np.ndarray]
    """A result (tensor, array or bool) as a NumPy array."""


def funcgrad_api() -> Api:
    """funcgrad's names."""
    import funcgrad as fg
    import funcgrad.check
    import funcgrad.func
    import funcgrad.functional

    return Api(fg, fg.tensor, funcgrad.functional, funcgrad.func, funcgrad.check.gradcheck,
               lambda r: r.numpy() if isinstance(r, fg.Tensor) else np.asarray(r))


def torch_api() -> Api:
    """torch's names."""
    import torch
    import torch.autograd.functional
    import torch.func

    return Api(torch, torch.tensor, torch.autograd.functional, torch.func, torch.autograd.gradcheck,
               lambda r: r.detach().numpy() if isinstance(r, torch.Tensor) else np.asarray(r))


# framework (module that must be importable) -> (label prefix, its Api)
APIS: dict[str, tuple[str, Callable[[], Api]]] = {"funcgrad": ("fg", funcgrad_api), "torch": ("torch", torch_api)}
SUBJECT = "funcgrad"
JIT = "fg jit"


def _runner(api: Api, function: Callable[..., Any], call: Call, consts: Sequence[np.ndarray],
            args: Sequence[np.ndarray], compile: Callable[[Call], Call] | None = None) -> Runner:
    """``call`` on ``f(x) = function(api.m, *consts, x)`` with the framework's tensors, result as NumPy;
    ``compile`` (e.g. ``funcgrad.func.jit``) wraps the whole call once, before any timing."""
    cs = [api.tensor(c) for c in consts]
    xs = [api.tensor(a) for a in args]

    def f(x: Any) -> Any:
        return function(api.m, *cs, x)

    def run(*ys: Any) -> Any:
        return call(api, f, *ys)

    compiled = compile(run) if compile else run
    return lambda: [api.numpy(compiled(*xs))]


def transform_workload(name: str, about: str, setup: Setup, function: Callable[..., Any],
                       calls: Mapping[str, Call], subject: str, sizes: Sizes, small_sizes: Sizes,
                       numpy_limit: Callable[..., np.ndarray] | None = None, targets: tuple[Target, ...] = (),
                       apis: Sequence[str] = tuple(APIS), rtol: float = 1e-7, jit: bool = False) -> Workload:
    """A workload running every call in every installed framework, beside the NumPy limit if any.

    Args:
        function: ``function(m, *constants, x)``, written with the namespace ``m``.
        calls: ``{kind: call}``; rows ``fg <kind>`` and ``torch <kind>``, except funcgrad's ``subject``
            kind, labelled ``funcgrad``.
        numpy_limit: ``numpy_limit(*constants, *args)``, the hand-written result, labelled ``numpy``
            and the reference; without it, the ``funcgrad`` row is the reference.
        apis: the frameworks given rows (the installed ones among them).
        jit: add the row ``fg jit``: the subject's call compiled with ``funcgrad.func.jit`` (recorded by the
            check call, replayed when timed).

    ``frameworks`` (given to ``build``) keeps the rows of those frameworks or with those labels.
    """
    reference = "numpy" if numpy_limit else SUBJECT

    def build(chosen: Sizes, frameworks: frozenset[str] | None) -> dict[str, Runner]:
        consts, args = setup(np.random.default_rng(0), **chosen)

        def wanted(framework: str, label: str) -> bool:
            return label == reference or frameworks is None or bool({framework, label} & frameworks)

        variants: dict[str, Runner] = {}
        for framework in apis:
            prefix, make_api = APIS[framework]
            labels = {kind: SUBJECT if (framework, kind) == (SUBJECT, subject) else f"{prefix} {kind}"
                      for kind in sorted(calls, key=lambda kind: kind != subject)}  # the subject's kind first
            if not installed(framework) or not any(wanted(framework, label) for label in labels.values()):
                continue
            api = make_api()
            variants |= {label: _runner(api, function, calls[kind], consts, args)
                         for kind, label in labels.items() if wanted(framework, label)}
            if jit and framework == SUBJECT and wanted(framework, JIT):
                variants[JIT] = _runner(api, function, calls[subject], consts, args, api.func.jit)
        if numpy_limit:
            variants["numpy"] = lambda: [numpy_limit(*consts, *args)]
        return variants

    return Workload(name, about, build, sizes, small_sizes, targets=targets, reference=reference, rtol=rtol)
