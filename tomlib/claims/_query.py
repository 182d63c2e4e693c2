"""The row conditions of a claims registry (``select``, ``a``, ``b``) as data, never as code.

A registry is shared like data, so its conditions are parsed (Python's ``ast``) and only these forms are accepted:
``and``, ``or``, ``not``, parentheses, and comparisons (``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=``, ``in``,
``not in``, chained as in ``1 <= n < 5``) between columns of the units table and literals (a string, a number,
``True``, ``False``, ``None``, or a list or tuple of them), or between two columns (``expert == player2``). Every
other form (a call, an attribute, a subscript, ``@``, backticks, arithmetic) is refused before any of it is
evaluated, and a name is only ever looked up among the table's columns. A condition selects the same rows as pandas'
``DataFrame.query`` of the same text (``==`` and ``!=`` against a list test membership, as there).
"""

from __future__ import annotations

import ast
import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tomlib.errors import did_you_mean

FIX = "write a condition on the units table's columns, e.g. `task == 'x' and n >= min_size` (data/claims/README.md)"
"""The fix every refusal names."""

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_MEMBERSHIP = (ast.In, ast.NotIn)
_SCALARS = (str, int, float, bool, type(None))  # bool is an int; complex, bytes and Ellipsis are not accepted


class QueryError(ValueError):
    """A condition outside the accepted forms, or one naming a column the table lacks; the message names the part."""


class MissingColumn(QueryError):
    """A condition naming columns the units table lacks (``missing``; ``hint``: the closest column, or "")."""

    def __init__(self, missing: list[str], hint: str) -> None:
        super().__init__(f"names {', '.join(missing)}, which the table lacks{hint}")
        self.missing, self.hint = missing, hint


@dataclass(frozen=True)
class Column:
    name: str


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Values:
    """A list or tuple of literals (the right side of ``in``, or of ``==`` as pandas reads it)."""

    values: tuple[Any, ...]


Operand = Column | Literal | Values


@dataclass(frozen=True)
class Compare:
    op: type[ast.cmpop]
    left: Operand
    right: Operand


@dataclass(frozen=True)
class Both:
    parts: tuple[Condition, ...]


@dataclass(frozen=True)
class Either:
    parts: tuple[Condition, ...]


@dataclass(frozen=True)
class Negated:
    part: Condition


Condition = Compare | Both | Either | Negated


@dataclass(frozen=True)
class Query:
    """A parsed condition and the columns it names."""

    text: str
    condition: Condition
    columns: frozenset[str]


@functools.lru_cache(maxsize=2048)
def parse(text: str) -> Query:
    """``text`` parsed into a :class:`Query`; :class:`QueryError` naming the part that is not an accepted form."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise QueryError(f"{text!r} is not a condition: {_syntax(text, exc)}; {FIX}") from None
    except (ValueError, RecursionError, MemoryError):  # a NUL byte; nesting deeper than the parser goes
        raise QueryError(f"{text!r} is not a condition; {FIX}") from None
    names: set[str] = set()
    try:
        condition = _Parser(text.strip(), names).condition(tree.body)
    except RecursionError:
        raise QueryError(f"{text!r} nests deeper than a condition needs; {FIX}") from None
    if _depth(condition) > MAX_DEPTH:
        raise QueryError(f"{text!r} nests deeper than a condition needs; {FIX}")
    return Query(text, condition, frozenset(names))


MAX_DEPTH = 100
"""The deepest nesting of and/or/not accepted (the registries' use 3; evaluation recurses once per level)."""


def _depth(cond: Condition) -> int:
    if isinstance(cond, Both | Either):
        return 1 + max(_depth(p) for p in cond.parts)
    if isinstance(cond, Negated):
        return 1 + _depth(cond.part)
    return 1


def check(text: str) -> str:
    """``text`` when it is an accepted condition (or empty); else :class:`QueryError`."""
    if text.strip():
        parse(text)
    return text


def mask(text: str, frame: pd.DataFrame) -> pd.Series:
    """The rows of ``frame`` that ``text`` selects, as a boolean Series on its index.

    Raises:
        MissingColumn: the condition names a column ``frame`` lacks.
        QueryError: the condition is not an accepted form.
        TypeError: the table's values cannot be compared as asked (a string column against a number with ``<``).
    """
    query = parse(text)
    missing = sorted(query.columns - set(frame.columns))
    if missing:
        raise MissingColumn(missing, did_you_mean(missing[0], [str(c) for c in frame.columns]))
    got = _evaluate(query.condition, frame)
    return got.astype(bool)


def _syntax(text: str, exc: SyntaxError) -> str:
    if "@" in text:
        return "'@' reaches Python names outside the units table"
    if "`" in text:
        return "backticks are not accepted (name a column as a plain word)"
    where = f" at character {exc.offset}" if exc.offset else ""
    return f"Python cannot parse it{where} ({exc.msg})"


class _Parser:
    """The accepted forms of an ``ast`` expression; every other node is refused with its text."""

    def __init__(self, text: str, names: set[str]) -> None:
        self.text, self.names = text, names

    def refuse(self, node: ast.AST, why: str) -> QueryError:
        part = ast.get_source_segment(self.text, node) or ast.dump(node)
        return QueryError(f"{self.text!r} holds {why} (`{part}`); {FIX}")

    def condition(self, node: ast.expr) -> Condition:
        if isinstance(node, ast.BoolOp):
            parts = tuple(self.condition(v) for v in node.values)
            return Both(parts) if isinstance(node.op, ast.And) else Either(parts)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return Negated(self.condition(node.operand))
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, ast.Name | ast.Constant):
            raise self.refuse(node, "a value where a test belongs (compare it: `flag == True`)")
        raise self.refuse(node, _kind(node))

    def compare(self, node: ast.Compare) -> Condition:
        sides = [self.operand(node.left), *(self.operand(c) for c in node.comparators)]
        parts = []
        for i, op in enumerate(node.ops):
            left, right = sides[i], sides[i + 1]
            if not isinstance(left, Column) and not isinstance(right, Column):
                raise self.refuse(node, "a comparison of two values (no column)")
            if isinstance(op, _MEMBERSHIP):
                if not (isinstance(left, Column) and isinstance(right, Values)):
                    raise self.refuse(node, "a membership test that is not `column in [values]`")
            elif type(op) not in _COMPARE:
                raise self.refuse(node, f"the operator {type(op).__name__}")
            elif (isinstance(left, Values) or isinstance(right, Values)) and not isinstance(op, ast.Eq | ast.NotEq):
                raise self.refuse(node, "an order comparison with a list")
            parts.append(Compare(type(op), left, right))
        return parts[0] if len(parts) == 1 else Both(tuple(parts))

    def operand(self, node: ast.expr) -> Operand:
        if isinstance(node, ast.Name):
            self.names.add(node.id)
            return Column(node.id)
        if isinstance(node, ast.List | ast.Tuple):
            return Values(tuple(self.literal(e) for e in node.elts))
        return Literal(self.literal(node))

    def literal(self, node: ast.expr) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, _SCALARS):
            return node.value
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, ast.USub | ast.UAdd)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)
        ):
            return -node.operand.value if isinstance(node.op, ast.USub) else node.operand.value
        raise self.refuse(node, _kind(node))


def _kind(node: ast.AST) -> str:
    """What a refused node is, in a reader's words."""
    kinds: dict[type[ast.AST], str] = {
        ast.Call: "a call",
        ast.Attribute: "an attribute",
        ast.Subscript: "a subscript",
        ast.BinOp: "arithmetic",
        ast.UnaryOp: "an operator on a value",
        ast.Lambda: "a function",
        ast.NamedExpr: "an assignment",
        ast.JoinedStr: "an f-string",
        ast.IfExp: "a conditional expression",
        ast.Starred: "an unpacking",
    }
    for kind, words in kinds.items():
        if isinstance(node, kind):
            return words
    if isinstance(node, ast.Constant):
        return f"a {type(node.value).__name__} literal"
    if isinstance(node, ast.Name):
        return "a name where a value belongs"
    if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
        return "a collection where a single value belongs"
    return f"a Python {type(node).__name__} expression"


def _evaluate(cond: Condition, frame: pd.DataFrame) -> pd.Series:
    if isinstance(cond, Both):
        return functools.reduce(operator.and_, (_evaluate(p, frame) for p in cond.parts))
    if isinstance(cond, Either):
        return functools.reduce(operator.or_, (_evaluate(p, frame) for p in cond.parts))
    if isinstance(cond, Negated):
        return ~_evaluate(cond.part, frame)
    return _compare(cond, frame)


def _compare(cmp: Compare, frame: pd.DataFrame) -> pd.Series:
    left, right = _value(cmp.left, frame), _value(cmp.right, frame)
    if cmp.op in _MEMBERSHIP or isinstance(cmp.left, Values) or isinstance(cmp.right, Values):
        column, values = (left, right) if isinstance(cmp.right, Values) else (right, left)
        inside = column.isin(list(values))
        return ~inside if cmp.op in (ast.NotIn, ast.NotEq) else inside
    got = _COMPARE[cmp.op](left, right)
    if not isinstance(got, pd.Series):  # a column compared with a literal always gives a Series; this is a guard
        raise QueryError(f"a comparison gave {type(got).__name__}, not one answer per row")
    return got


def _value(operand: Operand, frame: pd.DataFrame) -> Any:
    if isinstance(operand, Column):
        return frame[operand.name]
    if isinstance(operand, Values):
        return operand.values
    return operand.value
