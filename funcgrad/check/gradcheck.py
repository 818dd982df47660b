"""``gradcheck`` and ``gradgradcheck``: compare autograd's Jacobians with finite differences, as PyTorch's.

Slow mode compares whole Jacobians; fast mode compares ``v^T J u`` for random ``u``, ``v`` and re-runs slow mode to
explain a failure. Beside the Jacobians: reentrancy, undefined output grads, batched grads (reverse and forward mode)
and grad dtypes.
Finite differences live in ``numerical.py``, likely causes in ``causes.py`` and report text in ``report.py``; only
the public autograd API is used.
Complex inputs and outputs are checked in real coordinates (real and imaginary parts separately, as PyTorch's): the
gradient of ``Re <v, out>`` that autograd returns is the row ``(d/dRe, d/dIm)`` of the real Jacobian.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from funcgrad.autograd import enable_grad
from funcgrad.autograd import grad as autograd_grad
from funcgrad.check.analytical import Backward, cotangent, real_size
from funcgrad.check.arguments import as_tuple, checked_outputs, prepare, tensor_outputs
from funcgrad.check.causes import KINK_COLUMNS, Suspects
from funcgrad.check.forward import TangentError, forward_jacobian, jvps
from funcgrad.check.judge import Problem, judge
from funcgrad.check.numerical import Step, jacobian_fd, jvp_fd, real_shape, real_view
from funcgrad.check.report import GradcheckError, Mismatch, format_mismatch
from funcgrad.check.verdict import Verdict, combine, failed_check
from funcgrad.core.tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]

_BATCH = 3  # grad_outputs (tangents) in the batched-grad checks
_BATCH_TERMS = {  # per batched check: what is batched, the rule that batches it, its input, the option that skips it
    "batched": ("gradients", "backward", "grad_output", "check_batched_grad"),
    "batched forward": ("forward-mode gradients", "jvp", "the tangent", "check_batched_forward_grad")}
_ONCE = "marked with @once_differentiable"  # autograd's error when a once_differentiable backward is differentiated


@dataclass(frozen=True)
class _Options:
    """The tolerances and switches of one run, and how its report names outputs and inputs."""

    eps: Step
    atol: float
    rtol: float
    nondet_tol: float
    check_undefined_grad: bool
    check_grad_dtypes: bool
    check_batched_grad: bool
    fast_mode: bool
    three_valued: bool = False
    order: str = ""  # "second order " in gradgradcheck
    output_label: Callable[[int], str] = "output {}".format
    input_label: Callable[[int], str] = "input {}".format
    progress: bool = False  # a bar over the finite-difference columns
    check_batched_forward_grad: bool = False


class _Run:
    """One gradcheck: the function, its prepared inputs, and the checks in the order PyTorch runs them."""

    def __init__(self, func: Callable[..., Any], inputs: tuple[Any, ...], indices: list[int],
                 opts: _Options) -> None:
        self.func, self.inputs, self.indices, self.opts = func, inputs, indices, opts
        self.diff = [inputs[i] for i in indices]
        self.suspects = Suspects(func, inputs, {i: inputs[i].data.copy() for i in indices}, opts.eps, opts.atol,
                                 opts.nondet_tol, opts.output_label, opts.input_label)
        self.rng = np.random.default_rng(0)  # reproducible directions
        self.backward = Backward(func, inputs, indices, nondet_tol=opts.nondet_tol,
                                 check_grad_dtypes=opts.check_grad_dtypes, fail=self.fail,
                                 input_label=opts.input_label, output_label=opts.output_label)
        self.vjp = self.backward.vjp
        self.analytical = self.backward.jacobians

    def fail(self, check: str, message: str, j: int | None = None, i: int | None = None) -> GradcheckError:
        return GradcheckError(self.opts.order + check, message, j, i)

    def slow(self) -> None:
        """Compare every Jacobian block, then check reentrancy."""
        analytical, second = self.analytical()
        outputs = tensor_outputs(self.func, self.inputs)
        out_shapes = [real_shape(o) for o in outputs]
        for pos, i in enumerate(self.indices):
            numerical, errors = jacobian_fd(self.func, self.inputs, i, self.opts.eps, self.opts.progress)
            for j, (num, err) in enumerate(zip(numerical, errors)):
                ana = analytical[j][pos]
                allowed = self.opts.atol + self.opts.rtol * np.abs(num) + err
                bad = ~(np.abs(ana - num) <= allowed)
                if not bad.any():
                    continue
                columns = np.unique(np.nonzero(bad)[1])
                jumps = self.suspects.kinks(i, j, columns)
                m = Mismatch(self.opts.output_label(j), self.opts.input_label(i), num, ana, allowed,
                             out_shapes[j], real_shape(self.inputs[i]),
                             self.suspects.causes(i, j, num, ana, second[j][pos], jumps),
                             "c" in outputs[j].dtype.kind + self.inputs[i].dtype.kind)
                kink = len(jumps) == min(len(columns), KINK_COLUMNS)
                raise self.fail("kink" if kink else "jacobian", format_mismatch(
                    m, f"{self.opts.order.capitalize()}Input near a kink" if kink
                    else f"{self.opts.order.capitalize()}Jacobian mismatch"), j, i)
        self.reentrant(analytical, second)
        self.linear(analytical)

    def linear(self, analytical: list[list[np.ndarray]]) -> None:
        """A random grad_output must give its projection of the rows: the Jacobian is built from one-hot
        grad_outputs, on which a backward nonlinear in its grad_output (``g.abs()``, a branch on ``g > 0``) can
        still be right."""
        outputs = tensor_outputs(self.func, self.inputs)
        for j, out in enumerate(outputs):
            v = self.rng.standard_normal(real_size(out))
            for pos, row in enumerate(self.vjp(outputs, j, v)):
                want = v @ analytical[j][pos]
                tol = (self.opts.atol + self.opts.rtol * (np.abs(v) @ np.abs(analytical[j][pos]))
                       + self.opts.nondet_tol * np.abs(v).sum())  # the Jacobian's own tolerance: rounding passes
                if np.any(np.abs(row - want) > tol):
                    i = self.indices[pos]
                    raise self.fail("linearity", f"The backward is not linear in grad_output: for "
                                    f"{self.opts.output_label(j)} w.r.t. {self.opts.input_label(i)}, a random "
                                    "grad_output gives a gradient that differs from its combination of the "
                                    f"Jacobian's rows (one-hot grad_outputs) by up to {np.abs(row - want).max():.3g}."
                                    " A backward must be linear in grad_output (no abs, sign or branch on it).",
                                    j, i)

    def forward_mode(self, against_reverse: bool) -> None:
        """Forward mode's Jacobians against finite differences and, if checked too, reverse mode's."""
        reverse = self.analytical()[0] if against_reverse else None
        outputs = tensor_outputs(self.func, self.inputs)
        out_shapes = [real_shape(o) for o in outputs]
        for pos, i in enumerate(self.indices):
            numerical, errors = jacobian_fd(self.func, self.inputs, i, self.opts.eps, self.opts.progress)
            try:
                forward = forward_jacobian(self.func, self.inputs, i, self.opts.check_grad_dtypes)
            except TangentError as bad:
                raise self.bad_tangent("forward AD", bad, i) from bad
            for j, (num, err, fwd) in enumerate(zip(numerical, errors, forward)):
                allowed = self.opts.atol + self.opts.rtol * np.abs(num) + err
                if not np.all(np.abs(fwd - num) <= allowed):
                    complex_parts = "c" in outputs[j].dtype.kind + self.inputs[i].dtype.kind
                    raise self.fail("forward AD", format_mismatch(Mismatch(
                        self.opts.output_label(j), self.opts.input_label(i), num, fwd, allowed, out_shapes[j],
                        real_shape(self.inputs[i]), [], complex_parts), "Forward-mode Jacobian (JVP) mismatch"), j, i)
                if reverse is not None and not np.allclose(fwd, reverse[j][pos], self.opts.rtol, self.opts.atol):
                    raise self.fail("forward AD", f"Forward and reverse mode disagree for {self.opts.output_label(j)} "
                                    f"w.r.t. {self.opts.input_label(i)} (max difference "
                                    f"{np.abs(fwd - reverse[j][pos]).max():.3g}): the jvp and vjp rules do not "
                                    "describe the same Jacobian.", j, i)

    def reentrant(self, first: list[list[np.ndarray]], second: list[list[np.ndarray]]) -> None:
        """Raise unless two backward runs agree within ``nondet_tol``."""
        for j, (a_row, b_row) in enumerate(zip(first, second)):
            for pos, (a, b) in enumerate(zip(a_row, b_row)):
                # a NaN in both runs is as reproducible as any value (torch's max() of the difference skips it)
                if not np.all((np.abs(a - b) <= self.opts.nondet_tol) | (np.isnan(a) & np.isnan(b))):
                    i = self.indices[pos]
                    raise self.fail("reentrancy", f"Backward is not reentrant: running it twice with the same "
                                    f"input and grad_output gives values for {self.opts.input_label(i)} that "
                                    f"differ by up to {np.abs(a - b).max():.3g} (nondet_tol={self.opts.nondet_tol})"
                                    ", although the analytical gradient matches the numerical one. Make the "
                                    "backward deterministic or raise nondet_tol.", j, i)

    def fast(self) -> None:
        """Compare ``v^T J u`` numerically and analytically; on failure re-run slow mode to explain it."""
        outputs = tensor_outputs(self.func, self.inputs)
        us = [self.unit(real_size(x)) for x in self.diff]
        vs = [self.unit(real_size(o)) for o in outputs]
        runs = [[self.vjp(outputs, j, v) for j, v in enumerate(vs)]
                for _ in range(2)]
        for pos, (i, u) in enumerate(zip(self.indices, us)):
            jvps, errors = jvp_fd(self.func, self.inputs, i, u, self.opts.eps)
            for j, (jvp, err, v) in enumerate(zip(jvps, errors, vs)):
                num, ana = float(v @ jvp), float(runs[0][j][pos] @ u)
                allowed = (self.opts.atol * np.abs(u).sum() * np.abs(v).sum() + self.opts.rtol * abs(num)
                           + float(np.abs(v) @ err))
                if not abs(ana - num) <= allowed:
                    # the slow mode names the elements; a pass there means the projection was too strict
                    self.slow()
                    return
        self.reentrant([[np.atleast_1d(r[p] @ u) for p, u in enumerate(us)] for r in runs[0]],
                       [[np.atleast_1d(r[p] @ u) for p, u in enumerate(us)] for r in runs[1]])

    def no_differentiable_outputs(self) -> None:
        """No output requires grad: as PyTorch, the numerical gradient must then be zero."""
        for pos, i in enumerate(self.indices):
            if self.opts.fast_mode:
                numerical = jvp_fd(self.func, self.inputs, i, self.unit(real_size(self.diff[pos])), self.opts.eps)[0]
            else:
                numerical = jacobian_fd(self.func, self.inputs, i, self.opts.eps)[0]
            for j, num in enumerate(numerical):
                if np.abs(num).max(initial=0.0) > self.opts.nondet_tol:
                    raise self.fail("no differentiable outputs", "Numerical gradient for function expected to be "
                                    f"zero: no output requires grad, yet {self.opts.output_label(j)} changes with "
                                    f"{self.opts.input_label(i)} (by up to {np.abs(num).max():.3g} per unit). The "
                                    f"{'backward' if self.opts.order else 'function'} is computed outside autograd "
                                    "(NumPy on .data, detach(), no_grad): write it with funcgrad operations"
                                    f"{', or mark it once_differentiable' if self.opts.order else ''}.", j, i)

    def unit(self, n: int) -> np.ndarray:
        """A random unit vector of length ``n`` (empty for n = 0)."""
        u = self.rng.standard_normal(n)
        return u / max(float(np.linalg.norm(u)), 1e-300)

    def undefined_grad(self) -> None:
        """Zero or undefined output grads must give zero or None input grads, without crashing."""
        n_out = sum(o.requires_grad for o in tensor_outputs(self.func, self.inputs))
        cases = [None] + (list(range(n_out)) if n_out > 1 else [])
        for left_out in cases:
            outputs = [o for o in tensor_outputs(self.func, self.inputs) if o.requires_grad]
            chosen = [o for k, o in enumerate(outputs) if k != left_out]
            what = ("every output grad is zero" if left_out is None else
                    f"the grad of differentiable output {left_out} is undefined and the others are zero")
            try:
                grads = autograd_grad(chosen, self.diff, [np.zeros(o.shape, o.dtype) for o in chosen],
                                      allow_unused=True)
            except Exception as exc:
                raise self.fail("undefined grad", f"Backward failed when {what}: {type(exc).__name__}: {exc}. "
                                "A backward must handle undefined (None) output grads, e.g. with "
                                "ctx.set_materialize_grads(True) or by treating None as zero.") from exc
            for i, g in zip(self.indices, grads):
                if g is not None and np.any(g.data != 0):
                    raise self.fail("undefined grad", f"When {what}, the gradient of {self.opts.input_label(i)} "
                                    "is not zero: the backward must return zeros (or None) for zero grad_outputs "
                                    "(does it ignore grad_output?).", None, i)

    def batched(self) -> None:
        """``grad(..., is_grads_batched=True)`` must agree with a loop over the batch."""
        outputs = tensor_outputs(self.func, self.inputs)
        for j, out in enumerate(outputs):
            if not out.requires_grad:
                continue
            vs = self.rng.standard_normal((_BATCH, real_size(out)))
            looped = [self.vjp(outputs, j, v) for v in vs]
            try:
                grads = autograd_grad(out, self.diff, cotangent(vs, out), retain_graph=True, allow_unused=True,
                                      is_grads_batched=True)
            except Exception as exc:
                raise self.fail("batched", f"While computing batched gradients of {self.opts.output_label(j)}, "
                                f"got {type(exc).__name__}: {exc}", j) from exc
            for pos, (i, g) in enumerate(zip(self.indices, grads)):
                got = np.zeros((_BATCH, real_size(self.diff[pos]))) if g is None else real_view(
                    g.data).astype(np.float64).reshape(_BATCH, -1)
                self.same_batch("batched", got, np.stack([row[pos] for row in looped]), self.diff[pos].dtype, j, i)

    def batched_forward(self) -> None:
        """Forward mode with a batch of tangents must agree with one tangent at a time (torch's ``vmap`` of jvp)."""
        outputs = tensor_outputs(self.func, self.inputs)
        for i, x in zip(self.indices, self.diff):
            directions = self.rng.standard_normal((_BATCH, real_size(x)))
            looped = jvps(self.func, self.inputs, i, directions, batched=False)
            try:
                batched = jvps(self.func, self.inputs, i, directions, batched=True)
            except TangentError as err:
                raise self.bad_tangent("batched forward", err, i, f" for a batch of {_BATCH} tangents") from err
            except Exception as exc:
                raise self.fail("batched forward", f"While computing batched forward-mode gradients w.r.t. "
                                f"{self.opts.input_label(i)}, got {type(exc).__name__}: {exc}", None, i) from exc
            for j, (got, want) in enumerate(zip(batched, looped)):
                self.same_batch("batched forward", got.T, want.T, outputs[j].dtype, j, i)

    def bad_tangent(self, check: str, err: TangentError, i: int, batch: str = "") -> GradcheckError:
        """The failure for a tangent of the wrong shape or dtype, pushed from input ``i``."""
        return self.fail(check, f"The forward-mode tangent of {self.opts.output_label(err.output_index)} (pushed "
                         f"from {self.opts.input_label(i)}{batch}) {err}.", err.output_index, i)

    def same_batch(self, check: str, got: np.ndarray, want: np.ndarray, dtype: np.dtype, j: int, i: int) -> None:
        """Raise unless a batched result (rows: the batch) agrees with the loop over the batch, at ``dtype``'s
        precision."""
        tol = 1e-7 if np.finfo(dtype).dtype == np.float64 else 1e-4
        if got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol):
            return
        what, rule, seed, option = _BATCH_TERMS[check]
        differ = f"max difference {np.abs(got - want).max():.3g}" if got.shape == want.shape else (
            f"shape {list(got.shape)}, not {list(want.shape)}")
        raise self.fail(check, f"Batched {what} of {self.opts.output_label(j)} w.r.t. {self.opts.input_label(i)} "
                        f"differ from a loop over the batch: {differ}; the {rule} mishandles the leading batch "
                        f"dimension of {seed}. (If the function is not meant to support batches, pass {option}=False.)",
                        j, i)


def _run(func: Callable[..., Any], prepared: tuple[Any, ...], indices: list[int], opts: _Options,
         raise_exception: bool, check_forward_ad: bool, check_backward_ad: bool) -> bool:
    """Validate the arguments, then run the checks; False or GradcheckError on failure."""
    if not (check_backward_ad or check_forward_ad):
        raise ValueError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if opts.check_batched_forward_grad and not check_forward_ad:
        raise ValueError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if opts.check_batched_grad and not check_backward_ad:
        raise ValueError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if not indices:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none did; "
                         "pass inputs created with requires_grad=True")
    for i in indices:
        if prepared[i].dtype not in (np.float64, np.complex128) and opts.eps != "auto" and not opts.three_valued:
            warnings.warn(f"{opts.input_label(i)} requires grad and is {prepared[i].dtype}, not float64: a central "
                          f"difference with eps={opts.eps} keeps only about log10(eps / machine eps) significant "
                          "digits, so even a correct backward will likely fail. Use float64 inputs, or eps='auto' "
                          "to choose the step per dtype.", UserWarning, stacklevel=3)
    checked, differentiable = checked_outputs(func, prepared)
    run = _Run(checked, prepared, indices, opts)
    if opts.three_valued:
        if check_forward_ad or not check_backward_ad:
            raise ValueError("three_valued=True judges reverse mode: use check_forward_ad=False and "
                             "check_backward_ad=True (the PyTorch mode checks forward AD)")
        return _three_valued(run, differentiable, raise_exception)  # type: ignore[return-value]
    try:
        try:
            if not differentiable:
                run.no_differentiable_outputs()
            elif check_backward_ad:
                run.fast() if opts.fast_mode else run.slow()
            if check_forward_ad and differentiable:  # (else the numerical gradient must be zero, checked above)
                run.forward_mode(against_reverse=check_backward_ad)
                if opts.check_batched_forward_grad:  # as torch: before the checks of reverse mode's other properties
                    run.batched_forward()
        except RuntimeError as exc:
            # only autograd's own refusal; a GradcheckError naming once_differentiable as a cause is a failure
            if not opts.order or isinstance(exc, GradcheckError) or _ONCE not in str(exc):
                raise
            raise run.fail("once_differentiable", "The backward is marked once_differentiable, so it cannot be "
                           "differentiated and second derivatives are unavailable. Write it with funcgrad "
                           "operations (and drop the decorator) to support them.") from exc
        if opts.check_undefined_grad and differentiable:
            run.undefined_grad()
        if opts.check_batched_grad and differentiable:
            run.batched()
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _three_valued(run: _Run, differentiable: bool, raise_exception: bool) -> Verdict:
    """The three-valued run: ``judge`` the Jacobians; PyTorch's other checks failing are a ``fail`` too."""
    subject = run.opts.order.strip() or "first order"
    verdicts = []
    checks = [run.no_differentiable_outputs] if not differentiable else [
        lambda: verdicts.append(judge(_problem(run), subject, run.opts.fast_mode)),
        run.undefined_grad if run.opts.check_undefined_grad else None,
        run.batched if run.opts.check_batched_grad else None]
    for check in filter(None, checks):
        try:
            check()
        except GradcheckError as err:
            verdicts.append(failed_check(err.check.removeprefix("second order "), str(err), subject))
        except RuntimeError as exc:
            if run.opts.order and _ONCE in str(exc):
                raise run.fail("once_differentiable", "The backward is marked once_differentiable: second "
                               "derivatives are unavailable.") from exc
            raise
    verdict = combine(verdicts, subject)
    if verdict.failed and raise_exception:
        raise GradcheckError(run.opts.order + "verdict", str(verdict), verdict=verdict)
    return verdict


def _problem(run: _Run) -> Problem:
    """What ``judge`` needs: autograd's Jacobians and projections on demand (each computed twice: reentrant, or a
    GradcheckError) and how to name things."""
    outputs = tensor_outputs(run.func, run.inputs)

    def jacobians() -> list[list[np.ndarray]]:
        first, second = run.analytical()
        run.reentrant(first, second)
        return first

    def projections(covectors: np.ndarray) -> list[np.ndarray]:
        first, second = (run.backward.projections(outputs, covectors) for _ in range(2))
        run.reentrant([first], [second])
        return first

    problem = Problem(run.func, run.inputs, run.indices, jacobians, projections, [real_shape(o) for o in outputs],
                      run.opts.output_label, run.opts.input_label, [o.dtype.kind == "c" for o in outputs])
    if any(np.finfo(t.dtype).bits < 64 for t in (*run.diff, *outputs)):  # (complex64's finfo is float32's)
        problem.precise = _precise(run, problem)
    return problem


def _precise(run: _Run, problem: Problem) -> Problem | None:
    """``problem`` at float64 (complex128) copies of the floating inputs: what the judge measures the rounding of the
    outputs and Jacobians against. None when the function refuses them or answers in another shape."""
    inputs = tuple(Tensor(x.data.astype(np.promote_types(x.dtype, np.float64)), requires_grad=x.requires_grad)
                   if isinstance(x, Tensor) and x.dtype.kind in "fc" else x for x in run.inputs)
    backward = Backward(run.func, inputs, run.indices, nondet_tol=np.inf, check_grad_dtypes=False, fail=run.fail,
                        input_label=run.opts.input_label, output_label=run.opts.output_label)
    twin = Problem(run.func, inputs, run.indices, lambda: backward.jacobians()[0],
                   lambda v: backward.projections(tensor_outputs(run.func, inputs), v), problem.out_shapes,
                   problem.output_label, problem.input_label, problem.complex_outputs)
    try:
        same = twin.values().shape == problem.values().shape
    except Exception:  # (a function written for its inputs' precision only: nothing to measure against)
        return None
    return twin if same else None


def gradcheck(func: Callable[..., Any], inputs: Any, *, eps: Step = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, three_valued: bool = False,
              progress: bool = False) -> Any:
    """Check the gradients of ``func`` at ``inputs`` against finite differences, as ``torch.autograd.gradcheck``.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple; its floating-point Tensor outputs are checked.
        inputs: a Tensor or a tuple of arguments; the Tensors with ``requires_grad=True`` are checked, other
            arguments are passed through.
        eps: the central-difference step, or ``"auto"``: a step per dtype and scale with Richardson extrapolation
            and an error estimate, so float32 inputs can be checked too.
        atol, rtol: the tolerance ``|analytical - numerical| <= atol + rtol * |numerical|`` (plus the error
            estimate with ``eps="auto"``).
        raise_exception: raise ``GradcheckError`` on failure; else return False.
        nondet_tol: how much two backward runs with the same grad_output may differ.
        check_undefined_grad: zero or undefined output grads must give zero or None input grads.
        check_grad_dtypes: each gradient must have its input's dtype, each forward-mode tangent its output's
            precision (a tangent complex for a real output, or not floating point, always fails).
        check_batched_grad: ``grad(..., is_grads_batched=True)`` must agree with a loop.
        check_batched_forward_grad: forward mode with a batch of tangents (one pass) must agree with one tangent at
            a time; requires check_forward_ad.
        check_forward_ad: check forward mode too: its Jacobian (one batched pass of identity tangents per
            input, unbatched if that pass disagrees) against finite differences and, with check_backward_ad,
            against reverse mode's. Unlike torch, whose check keeps the real part of a complex tangent of a real
            output (with a warning), such a tangent fails.
        check_backward_ad: check reverse mode.
        fast_mode: compare ``v^T J u`` for random ``u``, ``v`` instead of whole Jacobians; a failure is
            re-checked in slow mode, which names the elements (and decides the verdict).
        three_valued: instead of PyTorch's verdict, return a ``Verdict``: ``pass``, ``fail`` (a discrepancy
            beyond the estimated numerical error) or ``inconclusive`` (a kink within the step, the dtype's
            resolution exhausted, a non-deterministic function), with steps fitted per element and Richardson
            error estimates; ``eps``, ``atol`` and ``rtol`` are then unused. Fast mode screens with projections on
            blocks of outputs and walks only what does not pass.
        progress: show a progress bar over slow mode's finite-difference columns (tqdm if installed).

    Returns:
        True when every check passes (a ``Verdict`` with ``three_valued=True``).

    Raises:
        GradcheckError: a check failed (with ``three_valued``: the verdict is ``fail``, carried as ``.verdict``)
            and ``raise_exception`` is True; its ``check`` names which one.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.randn(3, seed=0, requires_grad=True)
        >>> fg.check.gradcheck(fg.sin, (x,))
        True
    """
    flat_func, prepared, indices, labels = prepare(func, inputs)
    opts = _Options(eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes, check_batched_grad,
                    fast_mode, three_valued, input_label=labels.__getitem__, progress=progress,
                    check_batched_forward_grad=check_batched_forward_grad)
    return _run(flat_func, prepared, indices, opts, raise_exception, check_forward_ad, check_backward_ad)


def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = None, *, eps: Step = 1e-6,
                  atol: float = 1e-5, rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
                  check_grad_dtypes: bool = False, check_batched_grad: bool = False,
                  check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, three_valued: bool = False, progress: bool = False) -> Any:
    """Check second derivatives: ``gradcheck`` of the function returning ``func``'s vector-Jacobian products
    (computed with ``create_graph=True``), w.r.t. the inputs and the grad_outputs.

    Args:
        func, inputs, eps, atol, rtol, raise_exception, nondet_tol, check_undefined_grad, check_grad_dtypes,
            check_batched_grad, fast_mode, three_valued, progress: as ``gradcheck``, applied to the first-order
            function.
        grad_outputs: the vectors of the first-order products, one per differentiable output (those that require
            grad); random (seeded) and also checked if None.
        gen_non_contig_grad_outputs: accepted for PyTorch compatibility (arrays here are always contiguous).
        check_fwd_over_rev: check the second derivatives by forward mode over the first-order backward too.
        check_rev_over_rev: check reverse-over-reverse.

    Returns:
        True when every check passes (a ``Verdict`` with ``three_valued=True``).

    Raises:
        GradcheckError: a check failed; its ``check`` starts with ``"second order"``.
        RuntimeError: ``grad_outputs`` does not have one tensor per differentiable output.

    Example:
        >>> import funcgrad as fg
        >>> x = fg.randn(3, seed=0, requires_grad=True)
        >>> fg.check.gradgradcheck(fg.tanh, (x,))
        True
    """
    flat_func, prepared, indices, labels = prepare(func, inputs)
    checked, differentiable = checked_outputs(flat_func, prepared)
    first_opts = _Options(eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes, check_batched_grad,
                          fast_mode, three_valued, input_label=labels.__getitem__, progress=progress)
    if not differentiable:  # no first derivative to differentiate: the function must be constant, as PyTorch
        return _run(flat_func, prepared, indices, first_opts, raise_exception, False, True)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        gos = tuple(Tensor(cotangent(rng.standard_normal(real_size(o)), o), requires_grad=True)
                    for o in tensor_outputs(checked, prepared))
    else:
        gos = as_tuple(grad_outputs)
        n_out = len(tensor_outputs(checked, prepared))
        if len(gos) != n_out:  # zip would silently leave outputs unchecked
            raise RuntimeError(f"got {n_out} tensors and {len(gos)} gradients: grad_outputs needs one per "
                               "differentiable output of func")
    n = len(prepared)

    @enable_grad()
    def first_order(*args: Any) -> tuple[Tensor, ...]:
        # grad mode on even while the finite differences evaluate it: the first-order graph is what it measures
        diff = [args[i] for i in indices]
        used = [(o, g) for o, g in zip(tensor_outputs(checked, args[:n]), args[n:]) if o.requires_grad]
        grads = autograd_grad([o for o, _ in used], diff, [g for _, g in used], create_graph=True,
                              allow_unused=True) if used else (None,) * len(diff)
        return tuple(g if g is not None else Tensor(np.zeros(d.shape, d.dtype)) for g, d in zip(grads, diff))

    def output_label(j: int) -> str:
        return f"the gradient of {labels[indices[j]]}"

    labels += [f"grad_outputs[{k}]" for k in range(len(gos))]
    opts = _Options(eps, atol, rtol, nondet_tol, check_undefined_grad, check_grad_dtypes, check_batched_grad,
                    fast_mode, three_valued, "second order ", output_label, labels.__getitem__, progress)
    go_indices = [n + k for k, g in enumerate(gos) if isinstance(g, Tensor) and g.requires_grad]
    return _run(first_order, prepared + gos, indices + go_indices, opts, raise_exception, check_fwd_over_rev,
                check_rev_over_rev)
