"""Samples of funcgrad.linalg ops (funcgrad/ops/derivatives/linalg.py)."""

from tests.ops.sampling import A, P, S, away_from  # noqa: F401

SAMPLES: dict[str, list[S]] = {
}
