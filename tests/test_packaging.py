"""The package ships its type hints (PEP 561) and declares them as package data, so installs carry them."""
from pathlib import Path

import funcgrad

ROOT = Path(funcgrad.__file__).parent


def test_the_package_is_marked_typed() -> None:
    assert (ROOT / "py.typed").is_file()
    config = (ROOT.parent / "pyproject.toml").read_text()
    assert '[tool.setuptools.package-data]\nfuncgrad = ["py.typed"]' in config
    assert '[tool.mypy]' in config and 'files = ["funcgrad"]' in config
