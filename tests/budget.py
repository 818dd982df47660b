"""How many examples a property draws under the loaded hypothesis profile."""
from hypothesis import settings

_CI_EXAMPLES = 100  # hypothesis's default max_examples, which the ci profile keeps


def examples(n: int) -> int:
    """``n`` under the ci profile, scaled as the loaded profile's ``max_examples`` is (20x under thorough)."""
    return max(1, n * settings.default.max_examples // _CI_EXAMPLES)
