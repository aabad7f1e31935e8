"""No function of reports/ or engine/ with more than LIMIT branch points: a function a reader
cannot hold in mind is split into parts named for what they do. Branch points are counted with
``ast`` as the places where the path through a function forks: each ``if``, ``elif`` and
conditional expression, each ``for`` and ``while`` loop, each ``except`` clause, each ``with``,
each ``case`` of a ``match``, each boolean operand after the first (``a and b or c`` has two),
and each ``for`` and ``if`` of a comprehension. A function nested in another is counted on its own.

ENGINE_OVER lists engine/ functions allowed over the limit, with their counts, each checked only
not to grow: none is, since the engine's functions were brought under it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 20
ENGINE_OVER: dict[str, int] = {}

_FORKS = (ast.If, ast.IfExp, ast.For, ast.AsyncFor, ast.While, ast.ExceptHandler, ast.With, ast.AsyncWith,
          ast.match_case)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def branch_points(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The branch points of ``function``'s own body (not of the functions and classes inside it)."""
    count, stack = 0, list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, _SCOPES):
            continue
        count += isinstance(node, _FORKS)
        if isinstance(node, ast.BoolOp):
            count += len(node.values) - 1
        if isinstance(node, ast.comprehension):
            count += 1 + len(node.ifs)
        stack.extend(ast.iter_child_nodes(node))
    return count


def functions(folder: str) -> Iterator[tuple[str, int]]:
    """Every function below ``folder``, as ``path:name`` (``path:outer.inner`` for a nested one,
    ``path:Class.method`` for a method), with its branch points."""
    def walk(node: ast.AST, path: str, prefix: str) -> Iterator[tuple[str, int]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield f"{path}:{prefix}{child.name}", branch_points(child)
            if isinstance(child, _SCOPES):
                yield from walk(child, path, f"{prefix}{child.name}.")
            else:
                yield from walk(child, path, prefix)

    for file in sorted((ROOT / folder).rglob("*.py")):
        path = file.relative_to(ROOT).as_posix()
        yield from walk(ast.parse(file.read_text(encoding="utf-8")), path, "")


def over_the_limit(folder: str) -> dict[str, int]:
    return {name: count for name, count in functions(folder) if count > LIMIT}


def test_branch_points_are_counted_as_documented() -> None:
    source = '''
def f(xs, flag):
    if flag and xs or not xs:           # if, two boolean operands after the first
        return [x for x in xs if x > 0]  # a comprehension's for and its if
    elif len(xs) > 3:                     # elif
        y = 1 if flag else 2              # conditional expression
    for x in xs:                          # for
        while x:                          # while
            x -= 1
    try:
        with open("f") as g:              # with
            pass
    except OSError:                       # except
        pass
    match xs:
        case []:                          # case
            pass
    def inner():                          # counted on its own
        if xs: pass
    return lambda: 1 if flag else 0       # a lambda's conditional expression is f's
'''
    tree = ast.parse(source)
    assert branch_points(tree.body[0]) == 13
    assert branch_points(tree.body[0].body[-2]) == 1


def test_the_functions_are_found_by_their_names() -> None:
    found = dict(functions("tests"))
    assert found["tests/test_branch_points.py:branch_points"] == 4
    assert "tests/test_branch_points.py:functions.walk" in found


def test_no_function_of_the_reports_has_more_than_20_branch_points() -> None:
    assert over_the_limit("reports") == {}


def test_no_engine_function_crosses_the_limit_beyond_those_listed() -> None:
    over = over_the_limit("engine")
    assert set(over) <= set(ENGINE_OVER), f"over {LIMIT} branch points: {over}"
    grown = {name: count for name, count in over.items() if count > ENGINE_OVER[name]}
    assert grown == {}, f"more branch points than listed in ENGINE_OVER: {grown}"
