"""ASP verification of an agent's internal beliefs (``tom-internal-beliefs-asp.txt`` §3.3, Fig. 4), two ways.

``authors`` (:func:`self_consistent`), what the authors' code does: the translation is an ASP program over any
predicates (facts, rules with positive bodies, constraints; :func:`parse_program` rejects anything else, as their
validator does), and it passes when clingo finds an answer set of the program on its own. Nothing outside the
agent's words is consulted, so a belief can be false and still pass.

``grounded`` (:func:`verify`), our extension: beliefs are ground facts of a fixed vocabulary (:data:`VOCABULARY`,
checked by :func:`parse_facts`), and clingo checks them against the true state (map, capacities, positions,
levels, the legality of the planned action): an oracle the paper's agents never had.

Either way a malformed translation is reported, never run, and nothing can blow up the grounder (no function
terms, bounded size, a time limit). When the beliefs are inconsistent, :func:`minimal_core` finds a minimal
inconsistent subset: clingo's assumption core, shrunk by deletion until dropping any single statement makes the
rest consistent (the paper finds its core by a binary search; ours is guaranteed minimal). :func:`explain` says in
plain words what is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import clingo
from clingo import ast

from tomlib.envs.city import AGENTS, RESOURCES, ROLE, City, CityState

VOCABULARY: dict[tuple[str, int], str] = {
    ("at", 2): "at(Agent, District): the agent is in the district",
    ("carries", 3): "carries(Agent, Resource, Amount): the agent carries that many units",
    ("level", 3): "level(District, Resource, Amount): the district holds that much of the resource",
    ("health", 2): "health(District, Value): the district's health",
    ("connected", 2): "connected(District, District): a road links the two districts",
    ("plan", 1): "plan(move(District)) | plan(supply(Resource, Amount)) | plan(none): the action I intend",
    ("expects", 2): "expects(Agent, Action): what I expect another agent to do (move(D), supply(R, N), none)",
}
MAX_STATEMENTS = 60
MAX_CHARS = 6000

DOMAIN = r"""
road(X,Y) :- edge(X,Y).
road(Y,X) :- edge(X,Y).
violation(unknown_district(D)) :- at(_,D), not district(D).
violation(unknown_district(D)) :- level(D,_,_), not district(D).
violation(unknown_district(D)) :- health(D,_), not district(D).
violation(unknown_agent(A)) :- at(A,_), not agent(A).
violation(unknown_agent(A)) :- carries(A,_,_), not agent(A).
violation(unknown_resource(R)) :- carries(_,R,_), not resource(R).
violation(unknown_resource(R)) :- level(_,R,_), not resource(R).
violation(no_road(X,Y)) :- connected(X,Y), district(X), district(Y), not road(X,Y).
violation(two_places(A,X,Y)) :- at(A,X), at(A,Y), X < Y.
violation(wrong_place(A,X,Y)) :- at(A,X), true_at(A,Y), X != Y.
violation(over_capacity(A,N,C)) :- carries(A,_,N), capacity(C), N > C.
violation(wrong_resource(A,R,S)) :- carries(A,R,_), role(A,S), R != S.
violation(wrong_carry(A,N,M)) :- carries(A,R,N), self(A), true_carries(A,R,M), N != M.
violation(two_amounts(A,N,M)) :- carries(A,R,N), carries(A,R,M), N < M.
violation(level_mismatch(D,R,L,M)) :- level(D,R,L), true_level(D,R,M), L != M.
violation(two_levels(D,R,L,M)) :- level(D,R,L), level(D,R,M), L < M.
violation(health_mismatch(D,H,G)) :- health(D,H), true_health(D,G), H != G.
violation(two_plans(P,Q)) :- plan(P), plan(Q), P < Q.
violation(unknown_district(D)) :- plan(move(D)), not district(D).
violation(move_no_road(X,Y)) :- plan(move(Y)), self(A), at(A,X), district(Y), not road(X,Y), X != Y.
violation(supply_at_node(X)) :- plan(supply(_,_)), self(A), at(A,X), supply_node(X), not supply_at_node_ok.
violation(supply_wrong_resource(R,S)) :- plan(supply(R,_)), self(A), role(A,S), R != S.
violation(supply_too_much(N,M)) :- plan(supply(R,N)), self(A), carries(A,R,M), N > M.
violation(supply_nothing(N)) :- plan(supply(_,N)), N <= 0.
#external check.
:- violation(_), check.
#show violation/1.
"""


class TranslationError(ValueError):
    """A translation that is not a list of ground facts of the vocabulary; the message says which and why."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one verification."""

    consistent: bool
    facts: tuple[str, ...]
    core: tuple[str, ...] = ()
    violations: tuple[str, ...] = ()
    explanation: str = ""
    timed_out: bool = False
    domain: str = field(default="", repr=False)


def _lower(name: str) -> str:
    return name.lower()


def domain_facts(city: City, state: CityState, agent: str) -> str:
    """What the checker knows for sure: the map, capacities, roles, and what ``agent`` observes."""
    p, out = city.params, []
    out += [f"district({d})." for d in p.districts]
    out += [f"edge({a},{b})." for a, b in (*p.edges, *p.extra_edges)]
    out += [f"resource({_lower(r)})." for r in RESOURCES]
    out += [f"agent({_lower(a)}). role({_lower(a)},{_lower(ROLE[a])})." for a in AGENTS]
    out += [f"capacity({p.capacity}).", f"supply_node({p.supply_node}).", f"self({_lower(agent)})."]
    if p.supply_at_supply_node:
        out.append("supply_at_node_ok.")
    out += [f"true_at({_lower(a)},{state.position[a]})." for a in AGENTS]
    out.append(f"true_carries({_lower(agent)},{_lower(ROLE[agent])},{state.carry[agent]}).")
    out += [f"true_level({d},{_lower(r)},{state.levels[d][r]})." for d in p.districts for r in RESOURCES]
    out += [f"true_health({d},{h})." for d, h in state.health.items()]
    return "\n".join(out)


def _quiet(code: clingo.MessageCode, message: str) -> None:
    """Keep clingo's parser messages off stderr (the error is reported through the exception)."""


_SPLIT = re.compile(r"\.(?=\s|$)")


def parse_facts(text: str | Sequence[str]) -> list[str]:
    """Validate a translation: ground facts of :data:`VOCABULARY` only. Returns them normalized."""
    raw = text if isinstance(text, str) else "\n".join(str(t).strip().rstrip(".") + "." for t in text)
    if len(raw) > MAX_CHARS:
        raise TranslationError(f"the translation is {len(raw)} characters long; the limit is {MAX_CHARS}")
    raw = re.sub(r"%[^\n]*", "", raw)  # ASP comments
    statements = [s.strip() for s in _SPLIT.split(raw) if s.strip()]
    if len(statements) > MAX_STATEMENTS:
        raise TranslationError(f"{len(statements)} statements; at most {MAX_STATEMENTS} are checked")
    facts = []
    for s in statements:
        if ":-" in s or s.startswith("#") or "{" in s:
            raise TranslationError(f"'{s}' is a rule or directive; only facts like at(food_agent,d1). are allowed")
        try:
            sym = clingo.parse_term(s, logger=_quiet)
        except (RuntimeError, ValueError) as exc:
            hint = "it contains a variable (a capitalized name)" if re.search(r"\b[A-Z_]\w*", s) else "syntax error"
            detail = str(exc).strip().splitlines()[-1].split("error:")[-1].strip() or "cannot be read"
            raise TranslationError(f"'{s}' is not a ground fact: {hint} ({detail})") from None
        if sym.type != clingo.SymbolType.Function or (sym.name, len(sym.arguments)) not in VOCABULARY:
            known = ", ".join(f"{n}/{a}" for n, a in VOCABULARY)
            raise TranslationError(f"'{s}' is not in the vocabulary ({known})")
        facts.append(str(sym) + ".")
    return facts


def _simple(term: ast.AST) -> bool:
    """A variable, a number, a string or a constant (no arguments)."""
    if term.ast_type == ast.ASTType.Variable:
        return True
    if term.ast_type == ast.ASTType.UnaryOperation:  # -3
        return _simple(term.argument)
    return term.ast_type == ast.ASTType.SymbolicTerm and not (
        term.symbol.type == clingo.SymbolType.Function and term.symbol.arguments
    )


def _flat(atom: ast.AST) -> bool:
    """``name`` or ``name(a1, ..., an)`` with simple arguments, so grounding stays finite."""
    if atom.ast_type == ast.ASTType.Function:
        return not atom.external and all(_simple(a) for a in atom.arguments)
    if atom.ast_type == ast.ASTType.SymbolicTerm and atom.symbol.type == clingo.SymbolType.Function:
        return all(a.type != clingo.SymbolType.Function or not a.arguments for a in atom.symbol.arguments)
    return False


def _statement_error(node: ast.AST) -> str | None:
    """Why a parsed statement is outside the authors' translation format (None when it is inside)."""
    if node.ast_type != ast.ASTType.Rule:
        return "only facts, rules and constraints are allowed"
    head, body = node.head, node.body
    constraint = head.ast_type == ast.ASTType.Literal and head.atom.ast_type == ast.ASTType.BooleanConstant
    if not constraint and (head.ast_type != ast.ASTType.Literal or head.atom.ast_type != ast.ASTType.SymbolicAtom):
        return "the head must be a single atom"
    atoms = ([] if constraint else [head]) + list(body)
    for lit in body:
        if lit.ast_type != ast.ASTType.Literal or lit.sign != ast.Sign.NoSign:
            return "a body may only list atoms (no negation, comparisons or aggregates)"
        if lit.atom.ast_type != ast.ASTType.SymbolicAtom:
            return "a body may only list atoms (no comparisons)"
    if not all(_flat(lit.atom.symbol) for lit in atoms):
        return "arguments must be constants, numbers or variables, not nested terms"
    return None


def parse_program(text: str | Sequence[str]) -> list[str]:
    """Validate an ``authors``-style translation: facts, rules whose bodies list atoms, and constraints, over any
    predicates, with constants, numbers or variables as arguments. Returns the statements normalized."""
    raw = text if isinstance(text, str) else "\n".join(str(t).strip().rstrip(".") + "." for t in text if str(t).strip())
    if len(raw) > MAX_CHARS:
        raise TranslationError(f"the translation is {len(raw)} characters long; the limit is {MAX_CHARS}")
    raw = re.sub(r"%[^\n]*", "", raw)
    if "#" in raw:
        raise TranslationError("directives (#...) are not allowed; write facts, rules and constraints only")
    statements = [s.strip() for s in _SPLIT.split(raw) if s.strip()]
    if not statements:
        raise TranslationError("the translation is empty")
    if len(statements) > MAX_STATEMENTS:
        raise TranslationError(f"{len(statements)} statements; at most {MAX_STATEMENTS} are checked")
    out = []
    for s in statements:
        nodes: list[ast.AST] = []
        try:
            ast.parse_string(s + ".", nodes.append, logger=_quiet)
        except RuntimeError:
            raise TranslationError(f"'{s}.' is not valid ASP (syntax error)") from None
        for node in nodes[1:]:  # nodes[0] is the implicit '#program base.'
            if why := _statement_error(node):
                raise TranslationError(f"'{s}.': {why}")
            out.append(str(node).replace("#false :- ", ":- "))
    return out


def _guard(statement: str, i: int) -> str:
    """``statement`` active only while the assumption atom b(i) holds."""
    body = statement[:-1]
    return f"{body}; b({i})." if ":-" in body else f"{body} :- b({i})."


class Checker:
    """Grounds a fixed program plus one assumption atom per belief statement, once; then answers queries."""

    def __init__(
        self,
        domain: str,
        facts: Sequence[str],
        *,
        timeout_s: float = 5.0,
        rules: str = DOMAIN,
        messages: list[str] | None = None,
    ) -> None:
        self.facts = list(facts)
        self.timeout_s = timeout_s
        sink = messages if messages is not None else []
        ctl = clingo.Control(["--warn=none"], logger=lambda code, msg: sink.append(msg))
        program = [domain, rules]
        for i, fact in enumerate(self.facts):
            program.append(f"#external b({i}). {_guard(fact, i)}")
        ctl.add("base", [], "\n".join(program))
        ctl.ground([("base", [])])
        self.ctl = ctl
        self.timed_out = False

    def _solve(self, on: Sequence[int], check: bool) -> tuple[bool | None, list[clingo.Symbol], list[int]]:
        self.ctl.assign_external(clingo.Function("check"), check)
        for i in range(len(self.facts)):
            self.ctl.assign_external(clingo.Function("b", [clingo.Number(i)]), i in on)
        model_syms: list[clingo.Symbol] = []
        core: list[int] = []
        assumptions = [(clingo.Function("b", [clingo.Number(i)]), True) for i in on]
        with self.ctl.solve(
            assumptions=assumptions,
            on_model=lambda m: model_syms.extend(m.symbols(shown=True)),
            on_core=lambda c: core.extend(c),
            async_=True,
        ) as handle:
            if not handle.wait(self.timeout_s):
                handle.cancel()
                self.timed_out = True
                return None, [], []
            result = handle.get()
        return bool(result.satisfiable), model_syms, core

    def consistent(self, on: Sequence[int]) -> bool:
        sat, _, _ = self._solve(on, check=True)
        if sat is None:
            raise TimeoutError(f"verification exceeded {self.timeout_s} s")
        return sat

    def violations(self, on: Sequence[int]) -> list[str]:
        _, syms, _ = self._solve(on, check=False)
        return sorted(str(s.arguments[0]) for s in syms if s.name == "violation")

    def core(self) -> list[int]:
        """Belief indices in clingo's core for the full set (a superset of some minimal core)."""
        literal_of = {}
        for i in range(len(self.facts)):
            lit = self.ctl.symbolic_atoms[clingo.Function("b", [clingo.Number(i)])].literal
            literal_of[lit] = i
        sat, _, core_lits = self._solve(list(range(len(self.facts))), check=True)
        if sat is None:
            raise TimeoutError(f"verification exceeded {self.timeout_s} s")
        return sorted({literal_of[lit] for lit in core_lits if lit in literal_of}) if not sat else []


def minimal_core(checker: Checker) -> list[int]:
    """A minimal inconsistent subset (deletion-based shrinking of clingo's core): inconsistent, and
    consistent as soon as any one of its statements is dropped."""
    core = checker.core() or list(range(len(checker.facts)))
    i = 0
    while i < len(core):
        trial = core[:i] + core[i + 1 :]
        if not checker.consistent(trial):
            core = trial  # still inconsistent without it: it is not needed
        else:
            i += 1
    return core


_EXPLAIN = {
    "unknown_district": "there is no district {0}",
    "unknown_agent": "there is no agent called {0}",
    "unknown_resource": "there is no resource called {0}",
    "no_road": "there is no road between {0} and {1}",
    "two_places": "{0} cannot be in both {1} and {2}",
    "wrong_place": "{0} is in {2}, not {1}",
    "over_capacity": "{0} cannot carry {1} units; the capacity is {2}",
    "wrong_resource": "{0} carries {2}, not {1}",
    "wrong_carry": "{0} carries {2} units, not {1}",
    "two_amounts": "{0} cannot carry both {1} and {2} units",
    "level_mismatch": "{0} holds {3} {1}, not {2}",
    "two_levels": "{0} cannot hold both {2} and {3} {1}",
    "health_mismatch": "{0} has health {2}, not {1}",
    "two_plans": "you can only plan one action, not both {0} and {1}",
    "move_no_road": "you cannot move from {0} to {1}: no road links them",
    "supply_at_node": "resources cannot be supplied in {0}, the supply node",
    "supply_wrong_resource": "you can only supply {1}, not {0}",
    "supply_too_much": "you cannot supply {0} units when you carry {1}",
    "supply_nothing": "a supply of {0} units does nothing",
}


def explain(violations: Sequence[str], core_facts: Sequence[str]) -> str:
    """Plain-language feedback: the clashing statements and why they cannot all be true."""
    reasons = []
    for v in violations:
        sym = clingo.parse_term(v)
        args = [str(a) for a in sym.arguments]
        template = _EXPLAIN.get(sym.name)
        reasons.append(template.format(*args) if template else v)
    stmts = " ".join(core_facts)
    return f"These beliefs cannot all be true: {stmts} Reason: " + "; ".join(dict.fromkeys(reasons)) + "."


def verify(city: City, state: CityState, agent: str, facts: Sequence[str], *, timeout_s: float = 5.0) -> Verdict:
    """Check validated belief facts against the domain; on inconsistency return the minimal core and why."""
    domain = domain_facts(city, state, agent)
    checker = Checker(domain, facts, timeout_s=timeout_s)
    try:
        everything = list(range(len(facts)))
        if checker.consistent(everything):
            return Verdict(True, tuple(facts), domain=domain)
        core = minimal_core(checker)
    except TimeoutError:
        return Verdict(False, tuple(facts), timed_out=True, explanation="verification timed out", domain=domain)
    core_facts = tuple(facts[i] for i in core)
    violations = tuple(checker.violations(core))
    return Verdict(False, tuple(facts), core_facts, violations, explain(violations, core_facts), domain=domain)


SELF_CHECK = "#external check."  # no domain: the statements alone decide


def self_consistent(statements: Sequence[str], *, timeout_s: float = 5.0) -> Verdict:
    """The authors' check: do the translated statements have an answer set on their own? On inconsistency, the
    minimal core and which of its statements are constraints. A program clingo cannot ground (an unsafe variable)
    counts as inconsistent, as in the authors' code, with clingo's reason."""
    messages: list[str] = []
    try:
        checker = Checker("", statements, timeout_s=timeout_s, rules=SELF_CHECK, messages=messages)
    except RuntimeError:
        why = "; ".join(re.findall(r"(?:error|note): ([^\n]+?):?$", "\n".join(messages), re.M)) or "a grounding error"
        return Verdict(False, tuple(statements), explanation=f"The program cannot be grounded ({why}).")
    try:
        if checker.consistent(list(range(len(statements)))):
            return Verdict(True, tuple(statements))
        core = minimal_core(checker)
    except TimeoutError:
        return Verdict(False, tuple(statements), timed_out=True, explanation="verification timed out")
    core_facts = tuple(statements[i] for i in core)
    rules = [s for s in core_facts if s.startswith(":-")]
    why = f" The constraint {' and '.join(rules)} rules out what the others state." if rules else ""
    explanation = f"These beliefs cannot all be true: {' '.join(core_facts)}{why}"
    return Verdict(False, tuple(statements), core_facts, (), explanation)
