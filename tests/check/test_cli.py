"""``python -m funcgrad check``: a right function passes, a wrong Function fails with a report."""
from __future__ import annotations

import pytest

import funcgrad as fg
from funcgrad.__main__ import main
from funcgrad.check.cli import parse_inputs


def test_right_function_passes(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", "funcgrad:mul", "--inputs", "randn(3,4), randn(4)", "--examples", "3"])
    out = capsys.readouterr().out
    assert status == 0 and "gradgradcheck" in out and "all checks passed" in out


def test_wrong_function_fails(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", "tests.check.corpus:MissingFactor", "--inputs", "randn(3)", "--order", "1",
                   "--examples", "2"])
    out = capsys.readouterr().out
    assert status == 1 and "FAILED" in out and "check_function               fail" in out
    assert "missing factor 2" in out and "analytical" in out and "est. error" in out


def test_float32_passes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "tests.check.corpus:Exp", "--inputs", "rand(2)", "--dtype", "float32",
                 "--examples", "2"]) == 0
    assert "all checks passed" in capsys.readouterr().out


def test_inconclusive_is_reported_and_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["check", "tests.check.corpus:Jitter", "--inputs", "randn(3)", "--order", "1",
                   "--examples", "0"])
    out = capsys.readouterr().out
    assert status == 0 and "check_function               inconclusive" in out and "non-deterministic" in out
    assert "inconclusive (no check failed)" in out


def log_beyond_045(x: fg.Tensor) -> fg.Tensor:
    """Defined on (0.45, inf): inside positive(...)'s [0.5, 2)."""
    return fg.log(x - 0.45)


def test_hypothesis_draws_within_the_inputs_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    # positive(...) drew from [0.1, 2) in the hypothesis run (arrays' positive margin), outside the function's domain
    status = main(["check", "tests.check.test_cli:log_beyond_045", "--inputs", "positive(3)", "--order", "1",
                   "--examples", "10"])
    assert status == 0 and "all checks passed" in capsys.readouterr().out


def test_bad_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "nomodule", "--inputs", "randn(2)"]) == 2
    assert main(["check", "funcgrad:sin", "--inputs", "randn(x)"]) == 2
    assert "error" in capsys.readouterr().err


def test_parse_inputs_literals() -> None:
    assert parse_inputs("positive(2, 2), 3, 'a'") == [("positive", (2, 2)), 3, "a"]


@pytest.mark.parametrize("target,inputs,message", [
    ("math:pi", "randn(2)", "math:pi is a float, not a function or a custom Function subclass"),
    ("funcgrad:sin", "randn(2), randn(3)", "funcgrad:sin cannot take the 2 input(s) of --inputs"),
    ("tests.check.corpus:Exp", "randn(2), randn(2)", "tests.check.corpus:Exp cannot take the 2 input(s)"),
    ("funcgrad:mul", "randn(2)", "funcgrad:mul cannot take the 1 input(s) of --inputs"),
    ("funcgrad:sin", "2.5", "--inputs has nothing to differentiate"),
])
def test_unusable_targets_and_inputs_are_usage_errors(capsys: pytest.CaptureFixture[str], target: str, inputs: str,
                                                      message: str) -> None:
    """Issue 12: an `error:` line and status 2, as the other usage errors, never a traceback."""
    assert main(["check", target, "--inputs", inputs, "--examples", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and message in captured.err and "Traceback" not in captured.err
    assert captured.out == ""
