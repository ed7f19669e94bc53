"""Generic understanding holds no natural-language word: words are the languages' data.

Issue 37: every word list (yes and no, corrections, negators, connectors, homophones, task
verbs) lives in ``language/<code>/`` or a scenario's examples; ``understanding/`` reads them.
This test fails on a Chinese literal in its code (docstrings and comments may quote what
users say) and on a regular expression whose pattern spells a word.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERIC = sorted((ROOT / "understanding").glob("*.py"))
CJK = re.compile(r"[\u4e00-\u9fff]")
REGEX_CALLS = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "split"}


def _docstring_lines(tree: ast.AST) -> set[int]:
    """Lines of docstrings: a module's, a class's, a function's, an attribute's."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for index, statement in enumerate(body):
            is_string = isinstance(statement, ast.Expr) and isinstance(
                getattr(statement, "value", None), ast.Constant
            )
            if is_string and isinstance(statement.value.value, str):  # type: ignore[attr-defined]
                first = index == 0 and isinstance(
                    node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
                )
                after_assign = index > 0 and isinstance(body[index - 1], ast.Assign | ast.AnnAssign)
                if first or after_assign:
                    end = statement.end_lineno or statement.lineno
                    lines.update(range(statement.lineno, end + 1))
    return lines


def chinese_literals(source: str) -> list[tuple[int, str]]:
    """String literals of ``source`` (as written) that hold a Chinese character."""
    docs = _docstring_lines(ast.parse(source))
    found = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if (
            token.type == tokenize.STRING
            and token.start[0] not in docs
            and CJK.search(token.string)
        ):
            found.append((token.start[0], token.string))
    return found


_SYNTAX = re.compile(
    r"\\[a-zA-Z]"  # escapes: \d \s \w \b \u4e00 …
    r"|\\.|\[(?:\\.|[^\]])*\]"  # an escaped character, a character class
    r"|\(\?(?:P<\w+>|P=\w+\)|[aiLmsux-]+\)|[:=!<>]+)"  # group syntax and flags
    r"|\{[^}]*\}"  # repetition, or an f-string field
)


def spelled_words(pattern: str) -> list[str]:
    """Runs of two or more letters a pattern spells, once its syntax is taken away."""
    return re.findall(r"[A-Za-z]{2,}|[\u4e00-\u9fff]", _SYNTAX.sub(" ", pattern))


def word_regexes(source: str) -> list[tuple[int, str]]:
    """Regular expressions of ``source`` written as literals that spell a word."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in REGEX_CALLS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "re"
            and node.args
        ):
            continue
        first = node.args[0]
        pieces = first.values if isinstance(first, ast.JoinedStr) else [first]
        parts = [
            piece.value
            for piece in pieces
            if isinstance(piece, ast.Constant) and isinstance(piece.value, str)
        ]
        words = [w for part in parts for w in spelled_words(part)]
        if words:
            found.append((node.lineno, " ".join(words)))
    return found


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: p.name)
def test_no_chinese_literal_in_generic_understanding(path: Path) -> None:
    assert chinese_literals(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("path", GENERIC, ids=lambda p: p.name)
def test_no_word_regex_in_generic_understanding(path: Path) -> None:
    assert word_regexes(path.read_text(encoding="utf-8")) == []


def test_the_checks_catch_what_they_are_for() -> None:
    assert chinese_literals('x = "退款"\n') == [(1, '"退款"')]
    assert chinese_literals('"""说明：退款"""\nx = 1  # 注释\n') == []
    assert word_regexes('import re\nP = re.compile(r"(?:refund|money back)")\n')
    assert word_regexes('import re\nP = re.compile(r"(?<![a-z])\\d{3}[-_]?\\w+")\n') == []
    assert word_regexes('import re\nP = re.compile(rf"(?:{words})\\s+\\d")\n') == []
    assert word_regexes('import re\nP = re.compile(r"不要|别")\n')
