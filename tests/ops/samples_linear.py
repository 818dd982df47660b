"""Samples of products and contractions (funcgrad/ops/derivatives/linear.py)."""

from tests.ops.sampling import A, P, S, away_from  # noqa: F401

SAMPLES: dict[str, list[S]] = {
}
