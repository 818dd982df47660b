"""Hypothesis profiles for the suite.

``ci`` (the default) is derandomized and keeps no example database, so a verdict is reproducible from
one run to the next; ``thorough`` (``python -m pytest --hypothesis-profile=thorough``) draws random
examples, twenty times as many per property (see ``tests.budget.examples``).
"""
from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("thorough", max_examples=2000, deadline=None, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")
