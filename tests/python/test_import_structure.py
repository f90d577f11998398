"""The package imports downward: no module imports from inside a function (the sign of a
circle it works around), and none takes a helper from its package's ``__init__``."""

import ast
import pathlib

import minitensor

ROOT = pathlib.Path(minitensor.__file__).parent


def _modules():
    return sorted(p for p in ROOT.rglob("*.py") if "__pycache__" not in p.parts)


def _function_imports(tree):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    yield inner


def test_no_module_imports_inside_a_function():
    found = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        found += [f"{rel}:{node.lineno}" for node in _function_imports(tree)
                  if isinstance(node, ast.ImportFrom) and node.level > 0]
    assert not found, "imports inside functions: " + ", ".join(found)


def test_no_module_takes_a_helper_from_a_package_init():
    found = []
    for path in _modules():
        if path.name == "__init__.py":
            continue
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text(), str(path))
        package = path.parent
        for node in ast.walk(tree):
            if not (isinstance(node, ast.ImportFrom) and node.level > 0 and node.module is None):
                continue
            target = package
            for _ in range(node.level - 1):
                target = target.parent
            for alias in node.names:  # `from .. import x`: x must be a module of that package
                if not ((target / f"{alias.name}.py").exists() or (target / alias.name).is_dir()
                        or alias.name == "_minitensor"):
                    found.append(f"{rel}:{node.lineno} {alias.name}")
    assert not found, "helpers taken from a package's __init__: " + ", ".join(found)
