"""No subgoal sentence is written inside memory/.

The sentence forms of the subgoal language live in ``subgoals.phrases`` (and the grammar); a
memory gate returns a typed edit (``subgoals.edits``) instead of a sentence of its own. This check
walks the syntax tree of every memory module and fails on any f-string, ``str.format`` or
``%``-template, or plain string literal that fills a point ``<{...}, {...}>``, so the rule stays
true for tools added later. Docstrings and comments are free to show example subgoals with
concrete points (``"pick up the cube at <120, 64>"``); only templates are refused.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

MEMORY = Path(__file__).resolve().parents[1] / "memory"
FILES = sorted(MEMORY.rglob("*.py"))

_SLOT = r"(?:\{[^{}]*\}|%[-+ 0#]*\d*[sdif])"  # a format field: {}, {y}, {p[0]}, {0:d}, %d, %s
_TEMPLATE_POINT = re.compile(rf"<\s*{_SLOT}\s*,\s*{_SLOT}\s*>")
_HOLE = "{}"  # what a formatted value of an f-string reads as


def _fstring_text(node: ast.JoinedStr) -> str:
    out = []
    for part in node.values:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            out.append(part.value.replace("{", "{{").replace("}", "}}"))
        else:
            out.append(_HOLE)
    return "".join(out)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def point_templates(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every string in ``source`` that fills a ``<y, x>`` point from variables."""
    tree = ast.parse(source)
    docs = _docstring_nodes(tree)
    inner = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = _fstring_text(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs | inner:
            text = node.value
        else:
            continue
        if _TEMPLATE_POINT.search(text):
            found.append((node.lineno, text))
    return found


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(MEMORY).as_posix())
def test_no_subgoal_template_in_memory(path: Path):
    found = point_templates(path.read_text(encoding="utf-8"))
    assert not found, (
        f"{path} writes subgoal sentences {found}: build them with subgoals.phrases and return a "
        "subgoals.edits edit from the gate"
    )


@pytest.mark.parametrize(
    "source",
    [
        'def gate(p):\n    return f"press the button at <{p[0]}, {p[1]}> to stop"\n',
        'x = f"pick up the {noun} at <{y}, {x}> for the {nth} time"\n',
        'x = f"put it into the bin at <{int(round(b[0]))}, {int(round(b[1]))}>"\n',
        'x = "press the button at <{}, {}>".format(y, x)\n',
        'x = "press the button at <{y}, {x}>".format(y=1, x=2)\n',
        'x = "press the button at <%d, %d>" % (y, x)\n',
        'x = f"move to the top of the {side}-side target at < {y} , {x} >"\n',
    ],
)
def test_the_check_catches_point_templates(source):
    assert point_templates(source), source


@pytest.mark.parametrize(
    "source",
    [
        '"""Gate: "pick up the cube at <120, 64>" becomes "press the button at <66, 131>"."""\n',
        'def f():\n    """e.g. ``<{y}, {x}>`` in a docstring"""\n',
        'reason = f"grasped at {self.grasp_px}"\n',
        'key = f"progress/deposited {colour} cube"\n',
        'x = phrases.press(buttons[0], purpose="stop")\n',
        'x = "pick up the cube at <1, 2>"\n',
    ],
)
def test_the_check_lets_examples_and_diagnostics_be(source):
    assert not point_templates(source), source
