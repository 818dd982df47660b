"""All op samples, gathered from the per-family files: ``SAMPLES[name]`` is a list of sample calls."""
from tests.ops import (
    samples_elementwise,
    samples_indexing,
    samples_linalg,
    samples_linear,
    samples_nn,
    samples_reduction,
    samples_shape,
    samples_views,
)
from tests.ops.sampling import S

__all__ = ["SAMPLES", "DOMAINS", "S"]

FAMILIES = (samples_elementwise, samples_reduction, samples_shape, samples_indexing, samples_linear, samples_linalg,
            samples_views, samples_nn)
SAMPLES: dict[str, list[S]] = {}
for _family in FAMILIES:
    _clash = set(SAMPLES) & set(_family.SAMPLES)
    assert not _clash, f"samples given twice: {_clash}"
    SAMPLES.update(_family.SAMPLES)
DOMAINS = samples_elementwise.DOMAINS
