"""The package's layers point one way: each imports only the layers below it, at module level.

Read from the source (``ast``), so an import inside a function, which would hide a circle until it
runs, is caught as well.
"""
from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

import funcgrad

PACKAGE = Path(funcgrad.__file__).parent

# what each layer may import from funcgrad, besides itself (DESIGN.md, "Layers")
ALLOWED = {
    "core": set(),
    "ops": {"core"},
    "autograd": {"core", "ops"},
    "functional": {"core", "ops", "autograd"},
    "func": {"core", "ops", "autograd", "functional"},
    "check": {"core", "ops", "autograd", "functional", "func"},
    "nn": {"core", "ops", "autograd", "creation"},
    "optim": {"core"},
}


def _layer(module: str) -> str:
    """``"funcgrad.ops.calls"`` -> ``"ops"``; a top-level module (``funcgrad.linalg``) is its own layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """``(module, line, inside a function)`` for every funcgrad import of ``path``."""
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom):
                if child.level:
                    found.append((f"<relative import {child.module}>", child.lineno, in_function))
                elif child.module and child.module.split(".")[0] == "funcgrad":
                    names = [f"{child.module}.{a.name}" for a in child.names] if child.module == "funcgrad" else [
                        child.module]
                    found.extend((name, child.lineno, in_function) for name in names)
            elif isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, in_function) for a in child.names
                             if a.name.split(".")[0] == "funcgrad")
            visit(child, in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda))

    visit(ast.parse(path.read_text()), False)
    return found


def _files(layer: str) -> list[Path]:
    return sorted((PACKAGE / layer).rglob("*.py"))


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_below_it(layer: str) -> None:
    wrong = [f"{path.relative_to(PACKAGE)}:{line} imports {module}"
             for path in _files(layer) for module, line, _ in _imports(path)
             if module.startswith("<") or _layer(module) not in ALLOWED[layer] | {layer}]
    assert not wrong, "\n".join(wrong)


def test_the_core_imports_numpy_and_itself_only() -> None:
    outside = set()
    for path in _files("core"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                outside.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                outside.add((node.module or "").split(".")[0])
    standard = set(sys.stdlib_module_names) | {"__future__"}
    assert outside - standard == {"numpy", "funcgrad"}


def test_no_funcgrad_import_inside_a_function() -> None:
    # __main__ imports the checker's command line only when asked for it: it needs hypothesis, a test dependency
    wrong = [f"{path.relative_to(PACKAGE)}:{line} imports {module} inside a function"
             for path in sorted(PACKAGE.rglob("*.py")) if path.name != "__main__.py"
             for module, line, inside in _imports(path) if inside]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("old, new", [
    ("funcgrad.autograd.graph", "funcgrad.core.graph"),
    ("funcgrad.autograd.grad_mode", "funcgrad.core.grad_mode"),
    ("funcgrad.autograd.dispatch", "funcgrad.core.dispatch"),
    ("funcgrad.autograd.engine", "funcgrad.core.engine"),
    ("funcgrad.autograd.structured", "funcgrad.core.structured"),
    ("funcgrad.tensor", "funcgrad.core.tensor"),
])
def test_moved_modules_keep_their_old_import_paths(old: str, new: str) -> None:
    assert importlib.import_module(old) is importlib.import_module(new)


def test_public_names_resolve_at_their_documented_paths() -> None:
    from funcgrad.autograd.graph import saved_tensors_hooks
    from funcgrad.tensor import Tensor

    assert saved_tensors_hooks is funcgrad.core.graph.saved_tensors_hooks
    assert Tensor is funcgrad.Tensor
    assert callable(funcgrad.tensor) and isinstance(funcgrad.tensor([1.0]), Tensor)  # the factory, not a module
    assert funcgrad.func.jit is funcgrad.func.compiler.compiled.jit
