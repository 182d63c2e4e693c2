"""HTML for one step of the explorer: plain strings (no scripts), so they render the same live and in exported HTML.

Collapsible parts use ``<details>``, which needs no JavaScript; pictures are inline SVG.

Everything a run log says reaches the HTML through one door: :func:`step_html` escapes the whole step
(:func:`escaped`: every string in it, dict keys and numbers a log wrote as strings too) before any of the functions
below sees it, so they interpolate what they are given as is and a field added later cannot be left unescaped.
They are private for that reason: each expects an escaped view. A part that a malformed log breaks (a string where
a number belongs) is replaced by a line saying so (:func:`_drawn`), and the rest of the step is drawn.
"""

from __future__ import annotations

import dataclasses
import html
import json
import numbers
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from tomlib.widgets._orders import matched_text
from tomlib.widgets._trace import AgentStep, StepView

STYLE = """<style>
.tx {font-family: system-ui, sans-serif; font-size: 13px; line-height: 1.35}
.tx h4 {margin: 4px 0}
.tx .row {display: flex; gap: 12px; align-items: flex-start; flex-wrap: wrap}
.tx .card {border: 1px solid #ccc; border-radius: 6px; padding: 6px 8px; min-width: 260px; flex: 1}
.tx pre {background: #f6f6f6; padding: 4px 6px; margin: 2px 0; white-space: pre-wrap; max-height: 260px; overflow: auto}
.tx pre.grid {font-size: 18px; line-height: 1.1; display: inline-block; white-space: pre}
.tx .ok {color: #1a7f37} .tx .bad {color: #c62828} .tx .dim {color: #777}
.tx table {border-collapse: collapse} .tx td, .tx th {border: 1px solid #ddd; padding: 1px 6px; text-align: center}
.tx .p1 {color: #1565c0; font-weight: bold} .tx .p2 {color: #c62828; font-weight: bold}
</style>"""

COLORS = ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a")

_PARTIAL_ENTITY = re.compile(r"&[#A-Za-z0-9]*$")
MALFORMED = (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError)
"""What a log of the wrong shape raises while a part of a step is drawn (a string where a number belongs, a number
where a list does)."""


def _text(text: str) -> str:
    """``text`` escaped for HTML text and attribute values; the entities hold no digits, so a text map whose digits
    are coloured (:func:`text_grid`) leaves them whole."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;").replace("'", "&apos;")


def escaped(value: Any) -> Any:
    """``value`` with every string in it escaped for HTML text and attributes: strings, dict keys, the fields of a
    dataclass, the items of lists; numbers, booleans and None are kept, anything else becomes its escaped ``str``."""
    if isinstance(value, str):
        return _text(value)
    if value is None or isinstance(value, int | float):  # bool is an int
        return value
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escaped(v) for v in value]
    if isinstance(value, numbers.Number | np.bool_):  # numpy's scalars, from a frame
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: escaped(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **fields)
    return _text(str(value))


def _cut(text: str, n: int) -> str:
    """The first ``n`` characters of escaped text, without an entity cut in half at the end."""
    return text if len(text) <= n else _PARTIAL_ENTITY.sub("", text[:n])


def _drawn(part: Callable[..., str], *args: Any) -> str:
    """``part(*args)``, or a line naming what in the log it could not draw."""
    try:
        return part(*args)
    except MALFORMED as exc:
        said = html.escape(f"{type(exc).__name__}: {exc}"[:300])
        return f"<div class='bad'>This part of the step could not be drawn from the run log ({said}).</div>"


def step_html(view: StepView, *, style: bool = True) -> str:
    """The whole step: header, the game panel, and one card per agent; ``style=False`` leaves out :data:`STYLE`
    (a page of many steps carries it once). Every value from the log is escaped here, once (:func:`escaped`)."""
    view = escaped(view)
    head = _drawn(_header, view)
    panel = _drawn(game_panel, view)
    cards = "".join(_drawn(agent_card, a, view) for a in view.agents)
    tail = _drawn(_tail, view)
    body = f'<div class="tx">{head}<div class="row">{panel}</div><div class="row">{cards}</div>{tail}</div>'
    return (STYLE if style else "") + body


def _header(view: StepView) -> str:
    n = len(view.steps) or 1  # an episode whose steps were not logged shows its first state: step 1 of 1
    pos = view.steps.index(view.step) + 1 if view.step in view.steps else view.step + 1
    head = f"<h4>{view.ref.label()} — step {pos} of {n}</h4>"
    if view.note:
        head += f"<div class='dim'>{view.note}</div>"
    if view.after and "joint_action" in view.after:
        head += f"<div>joint action: <b>{' / '.join(map(str, view.after['joint_action']))}</b></div>"
    return head


def _tail(view: StepView) -> str:
    return "" if view.score is None else f"<div><b>episode outcome</b>: {_outcome(view.score)}</div>"


def _outcome(score: dict[str, Any]) -> str:
    if score.get("metric") == "pass_at_1":
        verdict = "passes" if score.get("value") else "fails"
        return f"the final code by {score.get('final')} {verdict} the hidden tests"
    if "team_answer" in score:
        return f"team answer {score.get('team_answer')} (key {score.get('truth')})"
    if score.get("metric") == "verdict":
        return f"last round's verdict: {score.get('winner')}"
    if "answer" in score:
        verdict = "passes" if score.get("passed") else "fails"
        return f"last round: team answer by {score['answer']} {verdict} the tests; FTM {score.get('value', 0):.0f}%"
    if "final_health" in score:
        counters = {k: v for k, v in score.items() if k not in ("final_health", "health")}
        return f"final mean health {score['final_health']:.2f}; {counters}"
    return f"{score.get('metric', 'score')} {score.get('value')} after {score.get('steps')} steps"


def game_panel(view: StepView) -> str:
    """The paper-specific picture of the state: matrix history, a grid replay, or the city map."""
    if view.kind == "matrix":
        return _card("matrix game", matrix_history(view.history) + _pre(view.before.get("state", "")))
    if view.kind in ("grid", "overcooked"):
        before = text_grid(str(view.before.get("state", ""))) + _status(view.before)
        after = text_grid(str(view.after.get("state", ""))) + _status(view.after) if view.after else ""
        legend = (
            '<div class="dim">1, 2: players; a, b: their goals; #: wall</div>'
            if view.kind == "grid"
            else '<div class="dim">1, 2: cooks; P pot, O onions, D dishes, S serving, X counter</div>'
        )
        return _card("before", before) + _card("after", after + legend)
    if view.kind == "programming":
        return _card(f"round {view.before.get('round', view.step)}", programming_round(view))
    if view.kind == "debate":
        return _card(f"round {view.step}", debate_round(view))
    if view.kind == "reasoning":
        return _card(f"{view.before.get('method', '')} · step {view.step}", reasoning_round(view))
    if view.kind == "city":
        return _card("city before this action", city_map(view.before)) + (
            _card("after", city_map(view.after)) if view.after else ""
        )
    return _card("state", _pre(_cut(json.dumps(view.before, default=str), 2000)))


def agent_card(a: AgentStep, view: StepView) -> str:
    """What one agent saw, each ToM level, prediction vs actual, final action, model-call stats, raw exchanges."""
    parts = [f"<h4>{a.agent}</h4>"]
    if a.saw:
        parts.append(f"<details><summary>what it saw</summary>{_pre(a.saw)}</details>")
    if a.levels:
        parts.append(_drawn(levels_table, a.levels))
    if a.predicted is not None or a.partner_actual is not None:
        hit = a.prediction_hit
        mark = "" if hit is None else ('<span class="ok">✔ right</span>' if hit else '<span class="bad">✘ wrong</span>')
        parts.append(f"<div>predicted partner: <b>{a.predicted}</b> · actual: <b>{a.partner_actual}</b> {mark}</div>")
    if a.weights:
        parts.append(_drawn(expert_weights_svg, view.weights_series.get(a.agent, []), view.step, a.weights))
    if a.expert_update:
        parts.append(_drawn(expert_update, a.expert_update, (a.weights or {}).get("orders", [])))
    for b in a.bdi:
        parts.append(_drawn(bdi_sections, b))
    for v in a.verifications:
        parts.append(_drawn(verification_block, v))
    if a.alignment:
        parts.append(_drawn(alignment_table, a.alignment))
    if a.code is not None:
        parts.append(_drawn(code_block, a.code, a.tests))
    if a.feedback:
        parts.append(f"<div>Reflector: <i>{a.feedback}</i></div>")
    if a.rated:
        parts.append(_drawn(_ratings, a.rated))
    for t in a.attempts:
        if t.get("how"):  # a multiple-choice reply: how its letter was read (tomlib.choices)
            parts.append(f"<div class='dim'>letter read by: {t['how']}</div>")
    spoke = [t["spoke"] for t in a.attempts if "spoke" in t]
    if spoke:
        parts.append(
            "<div><b>spoke this round</b></div>" if spoke[-1] else "<div class='dim'>prepared, did not speak</div>"
        )
    for t in a.attempts:
        if "problem" in t:
            parts.append(f"<div class='dim'>reply problem: {t['problem']}</div>")
    for t in a.attempts:
        if "illegal" in t:
            said = str(t["illegal"])
            said = said if len(said) <= 80 else _cut(said, 77) + "..."
            parts.append(f'<div class="bad">illegal: “{said}” — {_feedback(t)}</div>')
    for t in a.attempts:
        if "reason" in t:  # a tom_ib turn whose tries ran out
            parts.append(f"<div class='bad'>{t['reason']}</div>")
    parts.append(f"<div>final action: <b>{a.action}</b></div>")
    if a.matched_orders is not None:
        parts.append(_drawn(_matched, a.matched_orders, a.orders_disagree))
    if a.calls:
        parts.append(
            f'<div class="dim">{a.calls} model call(s), {a.tokens} tokens, {a.latency_s:.2f} s, '
            f"{a.cache_hits} from the cache</div>"
        )
        parts.append(_drawn(raw_exchanges, a.exchanges))
    return f'<div class="card">{"".join(parts)}</div>'


def _matched(orders: list[Any], disagree: Any) -> str:
    """Which formal orders' choices held the action (:func:`tomlib.widgets._orders.matched_text`)."""
    look = "" if disagree else " class='dim'"  # where all orders agree, a match says nothing of the order
    return f"<div{look}>{matched_text(orders, disagree)}</div>"


def _ratings(rated: dict[str, Any]) -> str:
    same = " (all equal)" if len(set(rated.values())) == 1 else ""
    said = ", ".join(f"{n} <b>{w:.2f}</b>" for n, w in rated.items())
    return f"<div>its ratings of the replies it saw (normalised{same}): {said}</div>"


def levels_table(levels: list[Any]) -> str:
    """Nested ToM levels side by side, innermost (ToM-0) first: belief → explanation → action."""
    cols = "".join(
        f"<td style='vertical-align:top; text-align:left'><b>ToM-{lv.order}</b> as {lv.seat}<br>"
        f"{'predicts' if lv.seat.startswith('player') else 'believes'}: "
        f"<b>{lv.prediction}</b><br>"
        f"<span class='dim'>{_cut(lv.explanation, 300)}</span><br>acts: <b>{lv.action}</b></td>"
        for lv in levels
    )
    return f"<table><tr>{cols}</tr></table>"


def raw_exchanges(exchanges: list[dict[str, Any]]) -> str:
    """The model calls verbatim, collapsed by default."""
    items = []
    for x in exchanges:
        msgs = "".join(f"<b>{m.get('role', '')}</b>{_pre(m.get('content', ''))}" for m in x.get("messages") or [])
        err = f"<div class='bad'>{x['error']}</div>" if x.get("error") else ""
        if x.get("missing"):
            err += f"<div class='dim'>{x['missing']}</div>"
        items.append(
            f"<details><summary>{x.get('purpose')} · attempt {x.get('attempt')} · "
            f"{x.get('cache')}</summary>{msgs}<b>reply</b>{_pre(x.get('reply') or '')}{err}</details>"
        )
    return f"<details><summary>raw model exchange ({len(exchanges)})</summary>{''.join(items)}</details>"


def matrix_history(history: list[list[str]]) -> str:
    """The choices so far, one column per round (5 points when they differ)."""
    if not history:
        return "<div class='dim'>no rounds played yet</div>"
    rounds = "".join(f"<th>{i + 1}</th>" for i in range(len(history)))
    p1 = "".join(f"<td class='p1'>{h[0]}</td>" for h in history)
    p2 = "".join(f"<td class='p2'>{h[1]}</td>" for h in history)
    pts = "".join(f"<td>{5 if h[0] != h[1] else 0}</td>" for h in history)
    rows = f"<tr><th>round</th>{rounds}</tr><tr><th>player1</th>{p1}</tr><tr><th>player2</th>{p2}</tr>"
    return f"<table>{rows}<tr><th>points</th>{pts}</tr></table>"


def text_grid(state: str) -> str:
    """A text map with the two players coloured."""
    body = state.replace("1", "<span class='p1'>1</span>").replace("2", "<span class='p2'>2</span>")
    return f"<pre class='grid'>{body}</pre>"


def expert_weights_svg(series: list[dict[str, Any]], step: int, current: dict[str, Any]) -> str:
    """A-ToM expert probabilities over the episode (Algorithm 1/2), the current step marked."""
    w, h, pad = 300, 120, 22
    orders = current.get("orders", [])
    n = max(len(series), 1)

    def x(i: int) -> float:
        return pad + (w - 2 * pad) * (i / max(n - 1, 1))

    def y(p: float) -> float:
        return h - pad - (h - 2 * pad) * p

    lines = []
    for j, order in enumerate(orders):
        pts = " ".join(f"{x(i):.1f},{y(s['probabilities'][j]):.1f}" for i, s in enumerate(series))
        c = COLORS[j % len(COLORS)]
        lines.append(f"<polyline fill='none' stroke='{c}' stroke-width='2' points='{pts}'/>")
        lines.append(f"<text x='{w - pad + 2}' y='{14 + 12 * j}' fill='{c}' font-size='10'>ToM-{order}</text>")
    at = f"x1='{x(step):.1f}' x2='{x(step):.1f}' y1='{pad / 2}' y2='{h - pad}'"
    mark = f"<line {at} stroke='#444' stroke-dasharray='3,2'/>"
    axes = (
        f"<line x1='{pad}' x2='{w - pad}' y1='{h - pad}' y2='{h - pad}' stroke='#999'/>"
        f"<text x='2' y='{y(1) + 4}' font-size='10'>1</text><text x='2' y='{y(0) + 4}' font-size='10'>0</text>"
        f"<text x='{w / 2 - 20}' y='{h - 4}' font-size='10'>step</text>"
    )
    probs = ", ".join(f"ToM-{o}: {p:.2f}" for o, p in zip(orders, current.get("probabilities", []), strict=False))
    said = ", ".join(f"ToM-{o} → {a}" for o, a in zip(orders, current.get("predictions", []), strict=False))
    return (
        f"<div><b>expert weights</b> ({current.get('algorithm')}; chose ToM-{current.get('chosen_order')};"
        f" {probs})</div><div>the experts predict the partner: {said}</div>"
        f"<svg width='{w + 30}' height='{h}'>{axes}{''.join(lines)}{mark}</svg>"
    )


def expert_update(p: dict[str, Any], orders: list[Any]) -> str:
    """A-ToM's update after the partner's move: a loss to every expert that predicted it wrong (Algorithm 1/2)."""
    losses = p.get("losses") or []
    names = [f"ToM-{o}" for o in orders] if len(orders) == len(losses) else [f"expert {i}" for i in range(len(losses))]
    said = ", ".join(f"{n} {v:g}" for n, v in zip(names, losses, strict=True))
    probs = ", ".join(f"{n} {v:.2f}" for n, v in zip(names, p.get("probabilities") or [], strict=False))
    return (
        f"<div>after the partner played <b>{p.get('partner_action')}</b>: experts' losses so far "
        f"{said}; next probabilities {probs}</div>"
    )


CITY_XY = {"d1": (40, 80), "d2": (160, 30), "d3": (160, 130), "d4": (280, 80)}


def city_map(state: dict[str, Any] | None) -> str:
    """The four districts with their links, resource levels, health and where each agent stands."""
    if not state or "levels" not in state:
        return ""
    edges = state.get("edges") or [["d1", "d2"], ["d1", "d3"], ["d2", "d4"], ["d3", "d4"], ["d2", "d3"]]
    xy = {d: CITY_XY.get(d, (40 + 60 * i, 160)) for i, d in enumerate(state["levels"])}
    out = [
        f"<line x1='{xy[a][0]}' y1='{xy[a][1]}' x2='{xy[b][0]}' y2='{xy[b][1]}' stroke='#bbb' stroke-width='3'/>"
        for a, b in edges
        if a in xy and b in xy
    ]
    health = state.get("health", {})
    here: dict[str, list[str]] = {}
    for agent, d in (state.get("positions") or {}).items():
        here.setdefault(d, []).append(_cut(agent.split("_")[0], 3))
    for d, (cx, cy) in xy.items():
        lv = state["levels"][d]
        low = any(v < 20 for v in lv.values()) and d in health
        out.append(f"<circle cx='{cx}' cy='{cy}' r='20' fill='{'#fde0dc' if low else '#e3f2fd'}' stroke='#555'/>")
        out.append(f"<text x='{cx - 8}' y='{cy + 4}' font-size='12' font-weight='bold'>{d}</text>")
        text = f"F{lv['FOOD']} M{lv['MEDICINE']} S{lv['SECURITY']}" + (f" ♥{health[d]}" if d in health else "")
        out.append(f"<text x='{cx - 40}' y='{cy + 34}' font-size='10'>{text}</text>")
        if d in here:
            out.append(f"<text x='{cx - 30}' y='{cy - 24}' font-size='10' fill='#c62828'>{' '.join(here[d])}</text>")
    carry = state.get("carry")
    extra = f"<div class='dim'>carrying: {json.dumps(carry)}</div>" if carry else ""
    return f"<svg width='340' height='180'>{''.join(out)}</svg>{extra}"


def bdi_sections(b: dict[str, Any]) -> str:
    """A BDI reply's sections (tom_ib §3.2): beliefs about others, internal beliefs, response, action."""
    rows = [f"<div><b>reply</b> ({b.get('config')}, attempt {b.get('attempt')})</div>"]
    for key, title in (
        ("beliefs_about_others", "beliefs about others (ToM)"),
        ("internal_beliefs", "internal beliefs (IB)"),
        ("response", "response (to the team)"),
        ("action", "action"),
    ):
        if key in b:
            val = b[key]
            text = "\n".join(map(str, val)) if isinstance(val, list) else str(val)
            rows.append(f"<div><i>{title}</i>{_pre(text)}</div>")
    return "".join(rows)


def verification_block(v: dict[str, Any]) -> str:
    """The ASP check of one belief set: translation, verdict, minimal core and its explanation."""
    if "translation_error" in v:
        why = str(v["translation_error"])
        return f"<div class='bad'>translation failed (attempt {v.get('attempt')}): {why}</div>"
    ok = v.get("consistent")
    verdict = "<span class='ok'>consistent</span>" if ok else "<span class='bad'>inconsistent</span>"
    facts = v.get("facts") or []
    how = {"authors": "self-consistency, as the authors", "grounded": "against the true state, ours"}.get(v.get("mode"))
    mode = f", {how}" if how else ""
    parts = [f"<div><b>ASP verification</b> (attempt {v.get('attempt')}{mode}): {verdict}</div>"]
    parts.append(f"<details><summary>ASP program ({len(facts)})</summary>{_pre(chr(10).join(facts))}</details>")
    if not ok:
        parts.append(f"<div>minimal core:{_pre(chr(10).join(v.get('core') or []))}</div>")
        parts.append(f"<div>explanation: {v.get('explanation', '')}</div>")
    return "".join(parts)


def _feedback(attempt: dict[str, Any]) -> str:
    """The environment's feedback without a long quote of the rejected text (shown just before it)."""
    text, said = str(attempt.get("feedback", "")), str(attempt.get("illegal", ""))
    return text.replace(f"&apos;{said}&apos;", "it") if len(said) > 80 else text  # the view is escaped


def _status(state: dict[str, Any]) -> str:
    return f"<div class='dim'>{state['status']}</div>" if state.get("status") else ""


def _card(title: str, body: str) -> str:
    return f"<div class='card'><b>{title}</b><br>{body}</div>"


def _pre(text: Any) -> str:
    return f"<pre>{text}</pre>"


def programming_round(view: StepView) -> str:
    """Iterative programming (coalition paper §6.3): the team in force, re-match signals and the team's answer."""
    b, ev = view.before, view.round_events
    parts = [
        f"<div>{b.get('benchmark', '')} {b.get('task', '')} · PM ToM-{b.get('pm_tom')} · "
        f"engineers ToM-{b.get('eng_tom')} · {b.get('matching', '')}</div>"
    ]
    if "coalition" in ev:
        c = ev["coalition"]
        how = "matched this round" if c.get("matched") else "kept"
        parts.append(f"<div>coalition ({how}): <b>{c.get('structure')}</b></div>")
    if "rematch" in ev:
        who = ", ".join(f"{m['by']}→{m['about']} (φ {m['phi']:.2f})" for m in ev["rematch"].get("misaligned", []))
        parts.append(f"<div class='bad'>re-match signal: {who}</div>")
    if "score" in ev:
        s = ev["score"]
        mark = "<span class='ok'>✔ passes</span>" if s.get("passed") else "<span class='bad'>✘ fails</span>"
        team = ", ".join(s.get("team", []))
        if "ftm_team" in s:  # FTM over all engineers (§6.2), the team's beside it
            ftm = f"FTM {100 * s.get('ftm_all', 0):.0f}% over all engineers (team {100 * s['ftm_team']:.0f}%)"
        else:  # a log written before: its value was the team's
            ftm = f"FTM {s.get('value', 0):.0f}% over the team (over all engineers {100 * s.get('ftm_all', 0):.0f}%)"
        parts.append(
            f"<div>team: {team} · {ftm}</div><div>team answer: <b>{s.get('answer')}</b>'s code {mark} the tests</div>"
        )
    if b.get("statement"):
        parts.append(f"<details><summary>task</summary>{_pre(b['statement'])}</details>")
    return "".join(parts)


def _coalition_line(ev: dict[str, dict[str, Any]]) -> str:
    c = ev.get("coalition")
    if not c:
        return ""
    again = " (re-formed)" if c.get("matched") else ""
    return f"<div>coalition: <b>{c.get('structure')}</b>{again}</div>"


def _mark(ok: bool, yes: str, no: str) -> str:
    return f"<span class='ok'>✔ {yes}</span>" if ok else f"<span class='bad'>✘ {no}</span>"


def debate_round(view: StepView) -> str:
    """The debate (coalition paper §6.4): who spoke on each side and why, the coalition, and the judge's verdict."""
    b, ev = view.before, view.round_events
    tested = f" · tested side: {b['tested_side']}" if b.get("tested_side") else ""
    parts = [f"<div>{b.get('topic', '')} · {b.get('setting', '')}{tested}</div>"]
    s = ev.get("score") or {}
    for side, names in (s.get("speakers") or {}).items():
        why = str((s.get("picked_by") or {}).get(side, ""))
        parts.append(f"<div>{side}: <b>{', '.join(names)}</b> <span class='dim'>({why})</span></div>")
    parts.append(_coalition_line(ev))
    if s:
        reason = _cut(str(s.get("reason", "")), 400)
        parts.append(f"<div>judge's verdict: <b>{s.get('winner')}</b></div><div class='dim'>{reason}</div>")
    return "".join(parts)


def reasoning_round(view: StepView) -> str:
    """A reasoning team (coalition paper §6.5, Appendix F): the coalition, the team's answer against the key (or the
    final code against the hidden tests) and DyLAN's importance per role."""
    b, ev = view.before, view.round_events
    parts = [_coalition_line(ev)]
    s = ev.get("score") or {}
    if "team_answer" in s:
        team = f" from {', '.join(s['team'])}" if s.get("team") else ""
        mark = _mark(s.get("team_answer") == s.get("truth"), "right", "wrong")
        parts.append(f"<div>team answer{team}: <b>{s.get('team_answer')}</b> (key {s.get('truth')}) {mark}</div>")
    if s.get("metric") == "pass_at_1":
        mark = _mark(bool(s.get("value")), "passes", "fails")
        parts.append(f"<div>final code by <b>{s.get('final')}</b> {mark} the hidden tests</div>")
    if s.get("importance"):
        cells = "".join(f"<td>{r}<br><b>{v:.2f}</b></td>" for r, v in s["importance"].items())
        parts.append(f"<div>Agent Importance Score</div><table><tr>{cells}</tr></table>")
    if b.get("statement"):
        parts.append(f"<details><summary>question</summary>{_pre(b['statement'])}</details>")
    return "".join(parts)


def alignment_table(p: dict[str, Any]) -> str:
    """The PM's Appendix A scores s, misalignment φ = (1 - s)/2 and trust (φ ≤ ε) per engineer, with FTM."""
    eps = float(p.get("epsilon", 0.25))
    phi = p.get("misalignment") or {}
    ok, bad = "<span class='ok'>trusted</span>", "<span class='bad'>not trusted</span>"
    rows = "".join(
        f"<tr><td>{name}</td><td>{s:+.2f}</td><td>{phi.get(name, 0):.2f}</td>"
        f"<td>{ok if phi.get(name, 1) <= eps else bad}</td></tr>"
        for name, s in (p.get("scores") or {}).items()
    )
    return (
        f"<div><b>belief-action alignment</b> (ε = {eps:g}; FTM over all {100 * float(p.get('ftm', 0)):.0f}%)</div>"
        f"<table><tr><th>teammate</th><th>score s</th><th>φ</th><th></th></tr>{rows}</table>"
    )


def code_block(code: str, tests: dict[str, Any] | None) -> str:
    """An engineer's code, collapsed, with its test outcome."""
    if tests is None:
        verdict = "<span class='dim'>not run</span>"
    elif tests.get("label"):  # a DyLAN coder: the Passer's and the Tester's verdicts, not the hidden tests
        why = f": {_cut(str(tests.get('reason')), 200)}" if tests.get("reason") else ""
        verdict = _mark(bool(tests.get("passed")), str(tests["label"]), str(tests["label"]) + why)
    elif tests.get("passed"):
        verdict = "<span class='ok'>✔ passes the tests</span>"
    else:
        why = _cut(str(tests.get("reason", "")), 200)
        verdict = f"<span class='bad'>✘ {tests.get('status')}: {why}</span>"
    return (
        f"<div>{verdict}</div><details><summary>code ({len(code.splitlines())} lines)</summary>{_pre(code)}</details>"
    )
