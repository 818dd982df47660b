"""Samples of indexing, joining and splitting ops (funcgrad/ops/derivatives/indexing.py)."""

from tests.ops.sampling import A, P, S, away_from  # noqa: F401

SAMPLES: dict[str, list[S]] = {
}
