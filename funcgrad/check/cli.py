"""``python -m funcgrad check module:attr --inputs "randn(3,4), randn(4)"``: check a user's function or custom
Function from the command line (three-valued gradcheck, gradgradcheck or ``check_function``, then a hypothesis
run), print each verdict (pass, fail, inconclusive with its reasons) and exit non-zero on fail only. Only argument
handling and printing live here.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from funcgrad.autograd import Function
from funcgrad.check.contract import check_function
from funcgrad.check.gradcheck import gradcheck, gradgradcheck
from funcgrad.check.properties import InconclusiveCheckWarning, assert_grads_correct
from funcgrad.check.report import GradcheckError
from funcgrad.check.strategies import arrays
from funcgrad.check.verdict import FAIL, INCONCLUSIVE, PASS, Verdict, combine
from funcgrad.core.tensor import Tensor

__all__ = ["main", "parse_inputs"]

# name -> (NumPy sampler, element bounds for hypothesis)
_MAKERS: dict[str, tuple[Callable[[np.random.Generator, tuple[int, ...]], np.ndarray], float, float]] = {
    "randn": (lambda rng, shape: rng.standard_normal(shape), -3.0, 3.0),
    "rand": (lambda rng, shape: rng.uniform(0.1, 1.0, shape), 0.1, 1.0),
    "positive": (lambda rng, shape: rng.uniform(0.5, 2.0, shape), 0.5, 2.0),
}


def parse_inputs(text: str) -> list[tuple[str, tuple[int, ...]] | Any]:
    """Parse ``"randn(3,4), rand(2), 2.5"`` into ``[("randn", (3, 4)), ("rand", (2,)), 2.5]``.

    ``randn`` draws standard normals, ``rand`` uniforms in [0.1, 1), ``positive`` uniforms in [0.5, 2);
    a literal is passed to the function as is.

    Raises:
        ValueError: an entry is neither one of those calls with integer sizes nor a literal.

    Example:
        >>> parse_inputs("randn(3,4), rand(2), 2.5")
        [('randn', (3, 4)), ('rand', (2,)), 2.5]
    """
    tree = ast.parse(f"({text},)", mode="eval").body
    specs: list[Any] = []
    for node in tree.elts:  # type: ignore[attr-defined]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _MAKERS:
            sizes = [ast.literal_eval(a) for a in node.args]
            if node.keywords or not all(isinstance(s, int) and s >= 0 for s in sizes):
                raise ValueError(f"bad input {ast.unparse(node)!r}: give sizes as non-negative integers, "
                                 "e.g. randn(3, 4)")
            specs.append((node.func.id, tuple(sizes)))
        else:
            try:
                specs.append(ast.literal_eval(node))
            except ValueError:
                raise ValueError(f"bad input {ast.unparse(node)!r}: use randn(...), rand(...), positive(...) "
                                 "or a literal") from None
    return specs


def _is_array_spec(spec: Any) -> bool:
    return isinstance(spec, tuple) and len(spec) == 2 and spec[0] in _MAKERS


def _load(target: str) -> Any:
    """Import ``module:attr`` (attr may be dotted), with the current directory importable."""
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ValueError(f"expected module:attr, got {target!r}")
    sys.path.insert(0, os.getcwd())
    obj: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def _check_target(name: str, target: Any, specs: list[Any]) -> None:
    """ValueError (a usage error) unless ``target`` can be checked at ``specs``: a function or custom
    Function taking that many inputs, at least one of them an array to differentiate."""
    is_function = isinstance(target, type) and issubclass(target, Function)
    if not is_function and not callable(target):
        raise ValueError(f"{name} is a {type(target).__name__}, not a function or a custom Function subclass")
    if not any(_is_array_spec(s) for s in specs):
        raise ValueError("--inputs has nothing to differentiate: give at least one randn(...), rand(...) or "
                         "positive(...) (literals are passed as they are)")
    fn, ctx = (target.forward, () if target._setup_style else (None,)) if is_function else (target, ())
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # no signature to read (a builtin): the checks will say
    try:
        signature.bind(*ctx, *specs)
    except TypeError as exc:
        raise ValueError(f"{name} cannot take the {len(specs)} input(s) of --inputs: {exc}") from None


def _hypothesis_run(func: Callable[..., Any], specs: list[Any], dtype: str, order: int, examples: int) -> Verdict:
    """``assert_grads_correct`` on ``examples`` drawn inputs of the same shapes; raises on a (shrunk) failure and
    returns a verdict that is inconclusive when some example was."""
    # (the bounds as they are: arrays(positive=True) would lower positive(...)'s 0.5 to its margin 0.1)
    parts = [arrays(spec[1], dtype, _MAKERS[spec[0]][1], _MAKERS[spec[0]][2]) if _is_array_spec(spec)
             else st.just(spec) for spec in specs]
    undecided: list[str] = []

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True)
    @given(st.tuples(*parts))
    def run(xs: tuple[Any, ...]) -> None:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", InconclusiveCheckWarning)
            assert_grads_correct(func, *xs, order=order)
        undecided.extend(str(w.message).splitlines()[0] for w in caught
                         if issubclass(w.category, InconclusiveCheckWarning))

    run()
    reasons = [f"{len(undecided)} example(s) inconclusive, e.g. {undecided[0]}"] if undecided else []
    return Verdict(INCONCLUSIVE if undecided else PASS, "hypothesis", reasons=reasons)


def _checks(target: Any, specs: list[Any], dtype: str, order: int,
            examples: int) -> list[tuple[str, Callable[[], Verdict]]]:
    """The named three-valued checks to run, in order."""
    rng = np.random.default_rng(0)
    inputs = tuple(Tensor(_MAKERS[s[0]][0](rng, s[1]).astype(dtype), requires_grad=True)
                   if _is_array_spec(s) else s for s in specs)
    is_function = isinstance(target, type) and issubclass(target, Function)
    func = target.apply if is_function else target
    options: dict[str, Any] = dict(three_valued=True, raise_exception=False)
    checks: list[tuple[str, Callable[[], Verdict]]] = []
    if is_function:
        checks.append(("check_function", lambda: check_function(target, *inputs, order=order,
                                                                raise_exception=False)))
    else:
        checks.append(("gradcheck", lambda: gradcheck(func, inputs, **options)))
        if order >= 2:
            checks.append(("gradgradcheck", lambda: gradgradcheck(func, inputs, **options)))
    if examples > 0:
        checks.append((f"hypothesis ({examples} examples)",
                       lambda: _hypothesis_run(target if is_function else func, specs, dtype, order, examples)))
    return checks


def main(argv: list[str]) -> int:
    """Run ``python -m funcgrad check``; return the exit status (0 pass or inconclusive, 1 fail, 2 bad usage)."""
    parser = argparse.ArgumentParser(prog="python -m funcgrad check",
                                     description="Check the derivatives of a function or custom Function: each "
                                     "check is pass, fail or inconclusive (with the reason).")
    parser.add_argument("target", help="module:attr of a function of Tensors or a Function subclass")
    parser.add_argument("--inputs", required=True, help='e.g. "randn(3,4), randn(4)"; also rand(...), '
                        "positive(...) and literals")
    parser.add_argument("--order", type=int, default=2, choices=[1, 2])
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--examples", type=int, default=50, help="hypothesis examples (0 to skip)")
    args = parser.parse_args(argv)
    try:
        specs = parse_inputs(args.inputs)
        target = _load(args.target)
        _check_target(args.target, target, specs)
    except (ValueError, SyntaxError, ImportError, AttributeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"funcgrad check {args.target} at {args.inputs} ({args.dtype}, order {args.order})")
    verdicts = []
    for name, check in _checks(target, specs, args.dtype, args.order, args.examples):
        try:
            verdict = check()
        except (GradcheckError, AssertionError) as exc:
            verdict = getattr(exc, "verdict", None) or Verdict(FAIL, name, reasons=str(exc).splitlines())
        verdicts.append(verdict)
        print(f"  {name:<28} {verdict.status}")
        if verdict.status != PASS:
            print("\n".join(f"    {line}" for line in str(verdict).splitlines()[1:]))
    overall = combine(verdicts, "all checks").status
    print({PASS: "all checks passed", FAIL: "FAILED", INCONCLUSIVE: "inconclusive (no check failed)"}[overall])
    return 1 if overall == FAIL else 0
