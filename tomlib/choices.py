"""Multiple-choice answers: the letter a free-text reply commits to, and accuracy with a confidence interval.

Replies are messy: reasoning that mentions several options before concluding, Markdown, JSON, "\\boxed{C}", the
option's text instead of its letter, lower case, "not A". The rule: the **last explicit answer statement** wins
("the answer is (C)", "Answer: c", "I choose option D", "\\boxed{B}", ``{"answer": "B"}``); without one, a reply that
is only a letter or ``(B)``; then a final line that names exactly one option's text; then a single distinct
``(X)``/``X)`` marker. Anything else is ``None`` (counted wrong), with the reason.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

_STATEMENT = re.compile(
    r"(?:final\s+answer|correct\s+(?:answer|option|choice)|the\s+answer|answer|my\s+choice|i\s+(?:choose|pick|select|"
    r"go\s+with)|i\s*'?\s*ll\s+go\s+with|option|choice)\s*(?:is|would\s+be|will\s+be|should\s+be|=|:|-)?\s*"
    r"(not\s+)?(?:option\s+|choice\s+)?[\(\[\*\"'`]*\s*([A-Za-z])\s*[\)\]\*\"'`]*(?![A-Za-z0-9])",
    re.I,
)
_BOXED = re.compile(r"\\boxed\{\s*\\?(?:text\{)?\s*\(?([A-Za-z])\)?\s*\}?\s*\}")
_ALONE = re.compile(r"^\W*\(?([A-Za-z])\)?\W*$")
_LEADING = re.compile(r"^\W*\(?([A-Za-z])[\).:]\s")
_MARKER = re.compile(r"\(([A-Z])\)|(?<![A-Za-z0-9])([A-Z])\)")


@dataclass(frozen=True)
class Choice:
    """The extracted letter (None when the reply commits to none) and how it was found."""

    letter: str | None
    how: str


def _json_answer(text: str, letters: Sequence[str], options: Sequence[tuple[str, str]]) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    for key in ("answer", "final_answer", "choice", "option"):
        val = obj.get(key)
        if isinstance(val, str) and val.strip():
            m = _ALONE.match(val.strip()) or _LEADING.match(val.strip() + " ")
            if m and m.group(1).upper() in letters:
                return m.group(1).upper()
            return _by_text(val, options)
    return None


def _norm(s: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[*_`$]", "", s)).strip().strip(".").lower()


def _by_text(text: str, options: Sequence[tuple[str, str]]) -> str | None:
    t = _norm(text)
    exact = [letter for letter, opt in options if _norm(opt) and _norm(opt) == t]
    if len(exact) == 1:
        return exact[0]
    inside = {
        letter: _norm(opt)
        for letter, opt in options
        if (len(_norm(opt)) >= 2 or _norm(opt).isdigit())
        and re.search(rf"(?<![\w.]){re.escape(_norm(opt))}(?![\w]|\.\d)", t)
    }
    # "treaties and custom" names one option, not also "treaties" and "custom": drop options inside a longer match
    kept = [a for a, text in inside.items() if not any(text != other and text in other for other in inside.values())]
    return kept[0] if len(kept) == 1 else None


def extract_choice(reply: str, options: Sequence[tuple[str, str]]) -> Choice:
    """The option letter ``reply`` commits to; ``options`` are (letter, text) pairs, e.g. ``(("A", "125"), …)``."""
    letters = [letter.upper() for letter, _ in options]
    text = (reply or "").strip()
    if not text:
        return Choice(None, "empty reply")
    got = _json_answer(text, letters, options)
    if got:
        return Choice(got, "json")
    boxed = [m.group(1).upper() for m in _BOXED.finditer(text)]
    if boxed and boxed[-1] in letters:
        return Choice(boxed[-1], "boxed")
    said = [
        (m.group(2).upper(), bool(m.group(1)))
        for m in _STATEMENT.finditer(text)
        if m.group(2).upper() in letters and (m.group(2).isupper() or not m.group(2).isalpha() or _lower_ok(m))
    ]
    positive = [letter for letter, negated in said if not negated]
    if positive:
        return Choice(positive[-1], "answer statement")
    m = _ALONE.match(text)
    if m and m.group(1).upper() in letters:
        return Choice(m.group(1).upper(), "bare letter")
    markers = {(a or b) for a, b in _MARKER.findall(text)} & set(letters)
    if len(markers) > 1:
        return Choice(None, f"ambiguous: mentions {', '.join(sorted(markers))} without committing")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    m = _LEADING.match(last + " ")
    if m and m.group(1).upper() in letters and m.group(1).isupper():
        return Choice(m.group(1), "leading letter of the last line")
    by_text = _by_text(last, options)
    if by_text:
        return Choice(by_text, "option text in the last line")
    if len(markers) == 1:
        return Choice(markers.pop(), "single option marker")
    return Choice(None, "no answer found")


def _lower_ok(m: re.Match[str]) -> bool:
    """A lower-case letter counts only right after an explicit 'answer' keyword with a separator (``answer: b``)."""
    head = m.group(0).lower()
    return bool(re.match(r"(final\s+)?answer\s*(is|:|=)", head))


@dataclass(frozen=True)
class Accuracy:
    correct: int
    total: int
    low: float
    high: float

    @property
    def value(self) -> float:
        return self.correct / self.total if self.total else float("nan")


def accuracy(correct: int, total: int, *, z: float = 1.96) -> Accuracy:
    """Accuracy with a Wilson score interval (95% by default), which stays inside [0, 1] for small samples."""
    if total <= 0:
        return Accuracy(correct, total, float("nan"), float("nan"))
    p = correct / total
    denom = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denom
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denom
    return Accuracy(correct, total, max(0.0, centre - half), min(1.0, centre + half))
