"""Executing notebooks with papermill's Python API, into ``results/notebooks/`` (plus HTML)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import posixpath
import re
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tomlib.errors import UsageError, closest_by_parts, did_you_mean
from tomlib.llm import ENV_LEDGER, ENV_MAX_TOKENS, ENV_MAX_USD, ENV_SPEND_TO_BUDGET, Budget, read_ledger
from tomlib.paths import (
    configs_dir,
    data_dir,
    environ,
    portable,
    project_root,
    results_dir,
    results_folder,
    webdeps_dir,
    write_atomic,
)
from tomlib.redact import redact_text
from tomlib.runner._cluster import (
    NotebookTask,
    TaskOutcome,
    driver_env,
    open_client,
    run_tasks,
    shared_folder,
    watch_cells,
    watch_estimates,
    write_token,
)
from tomlib.runner._models import check_models
from tomlib.runner._papermill import Failure, classify_failure
from tomlib.runner._params import check_values
from tomlib.runner._profiles import Profile, load_profile
from tomlib.runner._progress import Progress
from tomlib.runner._stale import clear_stale, units_written
from tomlib.sandbox import SANDBOX_ENV, sandbox_mode
from tomlib.trace import remove_stale_attempts


@dataclass
class NotebookResult:
    """What happened to one notebook in a run."""

    name: str
    status: str  # ok | failed | skipped | stopped (not run: the budget was spent)
    seconds: float = 0.0
    error: str = ""
    output: str = ""
    tables: list[str] = field(default_factory=list)
    spent: str = ""
    failure: Failure | None = None  # why it did not run to its end (None when it did, or was not run); not stamped


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def find_notebooks(names: Sequence[str] = (), directory: str | os.PathLike[str] | None = None) -> list[Path]:
    """Notebooks of the series, in order; ``names`` may be stems, number prefixes ("01") or paths."""
    folder = Path(directory) if directory else notebooks_dir()
    series = sorted(p for p in folder.glob("*.ipynb") if not p.name.startswith("."))
    if not names:
        return series
    picked: list[Path] = []
    for name in names:
        p = Path(name)
        if p.suffix == ".ipynb" and p.exists():
            picked.append(p.resolve())
            continue
        hits = [s for s in series if s.stem == name or s.stem.startswith(f"{name}_") or s.name == name]
        if not hits:
            raise UsageError(
                f"No notebook '{name}' in {folder}{_closest_notebook(name, series)}. Available: "
                f"{', '.join(s.stem for s in series) or '(none)'}."
            )
        picked.extend(hits)
    return picked


def _closest_notebook(name: str, series: Sequence[Path]) -> str:
    """`` (did you mean '01'?)`` for ``1``; else the stem whose parts are nearest the name's, its number one of them
    (``09_coalition_tabel2`` is ``09_coalition_table2_fig2``, not ``10_coalition_table3``), else difflib's closest."""
    prefixes = [s.stem.split("_", 1)[0] for s in series]
    padded = str(int(name)).zfill(2) if name.isdigit() else ""
    if padded in prefixes and padded != name:
        return f" (did you mean '{padded}'?)"
    if name.isdigit():
        return ""
    stems = [s.stem for s in series]
    near = closest_by_parts(name, stems)
    return f" (did you mean '{near}'?)" if near else did_you_mean(name, [*prefixes, *stems])


def results_for_run(
    names: Sequence[str] = (),
    directory: str | os.PathLike[str] | None = None,
    results: str | os.PathLike[str] | None = None,
) -> Path:
    """Where a run of ``names`` (from ``directory``) writes: ``results`` when given; else, for notebooks of a class
    folder (``./reproduce.sh lab``'s ``classroom/``), that folder's own results, so class work never touches the
    researcher's; else ``TOMLIB_RESULTS`` or ``results/``."""
    from tomlib.classroom import class_results

    if results is None:
        results = class_results(find_notebooks(names, directory) or ([directory] if directory else []))
    return results_dir(results)


def declared_parameters(notebook: Path) -> dict[str, Any]:
    """The notebook's ``parameters`` cell, as papermill reads it (name → info); read once per version of the file
    (a sweep asks for every grid point, a run for every check)."""
    st = notebook.stat()
    return dict(_inspect(str(notebook), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=64)
def _inspect(path: str, _mtime_ns: int, _size: int) -> dict[str, Any]:
    import papermill

    return dict(papermill.inspect_notebook(path))


def parameters_for(
    profile: Profile, notebook: Path, results: Path, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Profile parameters the notebook declares, the profile's parameters for it, then ``overrides`` (``-p``) it
    declares, type-checked against its parameters cell, and ``results_dir``."""
    declared = declared_parameters(notebook)
    if not declared:
        raise UsageError(f"{notebook.name} has no cell tagged 'parameters'; papermill cannot configure it.")
    own = profile.notebooks.get(notebook.stem, {})
    unknown = sorted(set(own) - set(declared))
    if unknown:
        raise UsageError(
            f"Profile '{profile.name}' sets {unknown} for {notebook.stem}, which does not declare them; "
            f"declared: {sorted(declared)}."
        )
    params = {k: v for k, v in profile.parameters.items() if k in declared}
    params.update(own)
    params.update({k: v for k, v in (overrides or {}).items() if k in declared})
    check_values(notebook.stem, declared, params, f"Parameters for {notebook.stem} (profile '{profile.name}')")
    if "results_dir" in declared:
        params["results_dir"] = str(results)
    return params


def check_overrides(books: Sequence[Path], overrides: dict[str, Any]) -> None:
    """Every ``-p``/``-y`` name must be a parameter of at least one chosen notebook (a typo is not ignored), with a
    value of the type its parameters cell gives, before any notebook starts."""
    if not overrides:
        return
    declared: dict[str, Any] = {}
    for nb in books:
        own = declared_parameters(nb)
        check_values(nb.stem, own, {k: v for k, v in overrides.items() if k in own}, "-p/-y")
        declared.update(own)
    unknown = {k: v for k, v in overrides.items() if k not in declared}
    if unknown:
        names = ", ".join(nb.stem for nb in books) if len(books) < 4 else f"the {len(books)} chosen notebooks"
        check_values(names, declared, unknown, "-p/-y")


def _hash_tree(h: Any, root: Path, pattern: str = "**/*") -> None:
    for p in sorted(root.glob(pattern)):
        if p.is_file() and "__pycache__" not in p.parts:
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())


_inputs_cache: dict[str, str] = {}


def shared_inputs_hash() -> str:
    """Hash of what every notebook depends on: the library, configs and data."""
    root = str(project_root())
    if root not in _inputs_cache:
        h = hashlib.sha256()
        _hash_tree(h, project_root() / "tomlib", "**/*.py")
        _hash_tree(h, configs_dir())
        _hash_tree(h, data_dir())
        _inputs_cache[root] = h.hexdigest()
    return _inputs_cache[root]


def inputs_hash(notebook: Path, params: dict[str, Any]) -> str:
    """What a run's outputs depend on: the notebook, the shared inputs and the parameters (not where it writes)."""
    h = hashlib.sha256(shared_inputs_hash().encode())
    h.update(notebook.read_bytes())
    what = {k: v for k, v in params.items() if k != "results_dir"}
    h.update(json.dumps(what, sort_keys=True, default=str).encode())
    return h.hexdigest()


# The AMD renderer of an exported notebook is a require.js module: it asks for its icon fonts under its module
# path, relative to the page, so it is copied there rather than into _static/.
AMD_RENDERER_DIR = "@jupyter-widgets/html-manager/dist"


_NAMED_MODULE = re.compile(r'define\("([^"]+)"')
# Only the web fonts: every browser since 2015 takes woff2 or woff from the renderer's @font-face list, so the eot,
# ttf and svg copies it also names (5 MB of a results folder) are never asked for.
_FONT_URL = re.compile(r'\.p\+"([\w.-]+\.(?:woff2|woff))"')


@functools.lru_cache(maxsize=4)
def font_folders(script: str, _mtime_ns: int) -> dict[str, tuple[str, ...]]:
    """Where the AMD renderer's modules ask for their icon fonts, relative to the page: each named module
    (``define("@jupyter-widgets/html-manager", ...)``) loads them from its own id's folder (``@jupyter-widgets/``), as
    require.js resolves a module id against the page, so every such folder needs the font files that module names."""
    text = Path(script).read_text(encoding="utf-8", errors="replace")
    starts = [(m.start(), m.group(1)) for m in _NAMED_MODULE.finditer(text)]
    found: dict[str, set[str]] = {}
    for (start, module), (end, _) in zip(starts, [*starts[1:], (len(text), "")], strict=True):
        sub = posixpath.dirname(module)
        if not sub or sub.startswith("/") or ".." in sub.split("/"):
            continue  # only folders beside the page
        fonts = set(_FONT_URL.findall(text, start, end))
        if fonts:
            found.setdefault(sub, set()).update(fonts)
    return {sub: tuple(sorted(fonts)) for sub, fonts in found.items()}


MATHJAX = "mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe"  # nbconvert's configuration, from beside the page


def _fetched(web: Path) -> tuple[bool, bool]:
    """Whether ``./reproduce.sh`` fetched MathJax, and the widget renderer with require.js, into ``web``."""
    renderer = (web / "html-manager" / "dist" / "embed-amd.js").exists() and (web / "requirejs" / "require.js").exists()
    return (web / "mathjax" / "MathJax.js").exists(), renderer


def page_scripts(folder: Path) -> dict[str, str]:
    """Copy require.js, the widget renderer (with its icon fonts) and MathJax beside the pages in ``folder`` once,
    and return the exporter settings that load them from there; what ``./reproduce.sh`` could not fetch keeps the
    CDN defaults."""
    from tomlib.widgets import copy_renderer

    web = webdeps_dir()
    has_mathjax, has_renderer = _fetched(web)
    settings: dict[str, str] = {}
    mathjax = web / "mathjax"
    if has_mathjax:
        if not (folder / "mathjax" / "MathJax.js").exists():
            shutil.copytree(mathjax, folder / "mathjax.part", dirs_exist_ok=True)
            shutil.rmtree(folder / "mathjax", ignore_errors=True)
            (folder / "mathjax.part").rename(folder / "mathjax")  # whole or not at all
        settings["mathjax_url"] = MATHJAX
    require = web / "requirejs" / "require.js"
    if not has_renderer:
        return settings
    renderer = copy_renderer(folder, "embed-amd.js", AMD_RENDERER_DIR)
    dist = web / "html-manager" / "dist"
    for sub, fonts in font_folders(str(dist / "embed-amd.js"), (dist / "embed-amd.js").stat().st_mtime_ns).items():
        for font in fonts:
            target = folder / sub / font
            if (dist / font).exists() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(dist / font, target)
    if not (folder / AMD_RENDERER_DIR / "require.js").exists():
        shutil.copyfile(require, folder / AMD_RENDERER_DIR / "require.js")
    return {**settings, "require_js_url": f"{AMD_RENDERER_DIR}/require.js", "widget_renderer_url": renderer}


def missing_page_scripts() -> str | None:
    """Which of the pages' scripts ``./reproduce.sh`` has not fetched here (the pages then load them from a CDN and
    need the network), as a warning line; None when all are here."""
    web = webdeps_dir()
    has_mathjax, has_renderer = _fetched(web)
    gone = [name for name, has in (("MathJax", has_mathjax), ("the widget renderer", has_renderer)) if not has]
    if not gone:
        return None
    return (
        f"{' and '.join(gone)} not found in {web}: this run's pages load them from the internet, so they do not work "
        "offline; ./reproduce.sh fetches them once (from the npm registry)"
    )


def export_html(notebook: Path) -> Path:
    """HTML beside the executed notebook (widget state included when the notebook saved it), redacted. The page
    loads its scripts from a folder beside it when they were fetched, so the results folder works offline."""
    import nbformat
    from nbconvert import HTMLExporter

    from tomlib.widgets import STATIC_PAGE_CSS, with_fallbacks

    nb = nbformat.read(notebook, as_version=4)
    body, _ = HTMLExporter(**page_scripts(notebook.parent)).from_notebook_node(nb)
    body = with_fallbacks(body, nb)
    body = body.replace("</head>", STATIC_PAGE_CSS + "</head>", 1)  # a saved page has no kernel
    body = shared_styles(body, notebook.parent)
    out = notebook.with_suffix(".html")
    write_atomic(out, portable(redact_text(body)))
    return out


_STYLE = re.compile(r'<style type="text/css">(.*?)</style>', re.S)
SHARED_STYLE_BYTES = 8192
"""Style blocks this large (nbconvert's JupyterLab theme, ~256 KB a page) go to one file beside the pages."""
STYLES_DIR = "_static"


def shared_styles(body: str, folder: Path) -> str:
    """Move the page's large style blocks into files every page of ``folder`` shares (``_static/style-<hash>.css``,
    named by content, written once) and link them in their place, so the order of the rules is kept."""

    def link(m: re.Match[str]) -> str:
        css = m.group(1)
        if len(css) < SHARED_STYLE_BYTES:
            return m.group(0)
        name = f"style-{hashlib.sha256(css.encode()).hexdigest()[:12]}.css"
        target = folder / STYLES_DIR / name
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, css)  # whole or absent, when two kernels export at once
        return f'<link rel="stylesheet" href="{STYLES_DIR}/{name}">'

    return _STYLE.sub(link, body)


def check_writable(directory: Path, results: Path) -> None:
    """Fail early, in one line, when ``directory`` (in the results folder ``results``) cannot be written, or when the
    results folder is one where another user could plant links (:func:`tomlib.paths.results_folder`)."""
    results_folder(results)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / f".write-test-{os.getpid()}", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW)
        os.close(fd)
        os.unlink(directory / f".write-test-{os.getpid()}")
    except OSError as exc:
        raise UsageError(
            f"The results directory {directory} is not writable ({exc.strerror or exc}); choose another with "
            "--results DIR (or TOMLIB_RESULTS), or fix its permissions."
        ) from None


@contextlib.contextmanager
def budget_env(budget: Budget | None, results: Path, spend_to_budget: bool = False) -> Iterator[Path | None]:
    """Hand a run-wide budget to every notebook kernel: limits and a ledger file (created now, so the path the
    runner prints exists) in the environment; ``spend_to_budget`` lets kernels start work estimated above it."""
    if budget is None or not budget.limited:
        yield None
        return
    ledger = results / "budget" / f"spend-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.jsonl"
    ledger.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(ledger, b"")
    env = {
        ENV_MAX_TOKENS: str(budget.max_tokens) if budget.max_tokens is not None else "",
        ENV_MAX_USD: str(budget.max_usd) if budget.max_usd is not None else "",
        ENV_LEDGER: str(ledger),
        ENV_SPEND_TO_BUDGET: "1" if spend_to_budget else "",
    }
    with environ(env):
        yield ledger


@contextlib.contextmanager
def sandbox_env(mode: str | None) -> Iterator[str]:
    """The sandbox mode every kernel of the run gets (``mode``, else ``TOMLIB_SANDBOX``, else ``isolated``); an
    unknown mode fails here, before any notebook starts."""
    resolved = sandbox_mode(mode)
    with environ({SANDBOX_ENV: resolved}):
        yield resolved


def spend_line(tokens: int, usd: float, calls: int, budget: Budget) -> tuple[str, bool]:
    """The run's spend so far in words, and whether the budget is spent."""
    spent = (budget.max_tokens is not None and tokens >= budget.max_tokens) or (
        budget.max_usd is not None and usd >= budget.max_usd
    )
    return f"{tokens:,} tokens, ${usd:.4f} in {calls} live call(s) of a budget of {budget.describe()}", spent


def run_notebooks(
    profile: str | Profile = "default",
    names: Sequence[str] = (),
    *,
    force: bool = False,
    results: str | os.PathLike[str] | None = None,
    directory: str | os.PathLike[str] | None = None,
    html: bool = True,
    progress: bool = True,
    budget: Budget | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    overrides: dict[str, Any] | None = None,
    sandbox: str | None = None,
    spend_to_budget: bool = False,
    dashboard: bool | None = None,
    claims_ahead: bool = False,
) -> list[NotebookResult]:
    """Execute the series (or ``names``) under a profile; keeps going past failures.

    Notebooks run as tasks on dask. A run-wide budget is shared by every kernel through a ledger file; once it is
    spent the series stops cleanly, and everything answered is kept in the response store, so a rerun with a larger
    budget resumes without repeating a call. Each notebook prints its cost estimate before its first live call. Model
    names (and, for recording, their keys) are checked before any kernel starts. A failed attempt never replaces a
    good executed notebook: it is kept beside it as ``<name>.failed.ipynb``.

    Args:
        profile: the profile (or its name) whose parameters, skips, budget and cluster the run takes.
        names: notebooks to run (stems, number prefixes such as ``"01"``, or paths); empty: the whole series, less
            the profile's ``skip``.
        force: rerun notebooks whose last run succeeded on the same inputs (else they are skipped).
        results: the results folder; default: a class folder's own (``directory`` = ``classroom/``), else
            ``TOMLIB_RESULTS`` or ``results/`` (:func:`results_for_run`).
        directory: the folder of the notebooks; default ``notebooks/``.
        html: export each executed notebook as a page beside it.
        progress: show a progress bar (one plain line per notebook in a log).
        budget: bound on the live calls of the whole run; default the profile's.
        jobs: notebooks at a time on this machine (a local cluster of that many workers).
        scheduler: address of a dask cluster to run on instead; default the profile's.
        overrides: ``-p NAME VALUE``: values for every chosen notebook that declares the name, over the profile's;
            a name no chosen notebook declares is an error.
        sandbox: how generated code runs (:data:`tomlib.sandbox.SANDBOX_MODES`); default the profile's. Every
            stamp records it.
        spend_to_budget: start a notebook whose estimate exceeds what is left of the budget, and stop it at the
            budget; default: it stops unspent (status ``stopped``).
        dashboard: serve the local cluster's dashboard on 127.0.0.1; default the profile's.
        claims_ahead: a report follows the run: judge each paper's claims on a background thread once the
            notebooks that write its tables are done (:func:`tomlib.claims.judge_ahead`).
    """
    prof = profile if isinstance(profile, Profile) else load_profile(profile)
    budget = budget or prof.budget
    res = results_for_run(names, directory, results)
    out_dir = res / "notebooks"
    check_writable(out_dir, res)
    remove_stale_attempts(res)  # half-executed notebooks of an interrupted run: nothing can finish them now
    books = [nb for nb in find_notebooks(names, directory) if names or nb.stem not in prof.skip]
    check_overrides(books, overrides or {})
    plan = _plan(books, prof, res, out_dir, force=force, overrides=overrides or {})
    for line in check_models((stem, p.params) for stem, p in plan.items() if p.result is None):
        print(f"warning: {line}")
    if html and any(p.result is None for p in plan.values()) and (scripts := missing_page_scripts()):
        print(f"warning: {scripts}")
    with sandbox_env(sandbox or prof.sandbox), budget_env(budget, res, spend_to_budget) as ledger:
        if ledger is not None and budget is not None:
            over = "starts anyway and stops at the budget" if spend_to_budget else "is refused before its first call"
            print(
                f"budget: {budget.describe()} for the live calls of this run (replayed calls are free). It can be "
                "passed only by calls already in flight when it runs out; a notebook whose estimate exceeds what is "
                f"left {over}. Spend is logged in {ledger}."
            )
        run = _Run(plan, prof, html, budget, ledger, overrides or {}, claims_ahead)
        return run.execute(
            books,
            progress=progress,
            jobs=jobs,
            scheduler=scheduler or prof.scheduler,
            dashboard=prof.dashboard if dashboard is None else dashboard,
        )


@dataclass
class _Planned:
    result: NotebookResult | None = None  # decided without running (skipped, or a configuration error)
    params: dict[str, Any] = field(default_factory=dict)
    digest: str = ""
    output: Path = Path()
    stamp: Path = Path()
    previous: dict[str, Any] = field(default_factory=dict)  # the stamp of the last attempt, if any


def _plan(
    books: list[Path], prof: Profile, res: Path, out_dir: Path, *, force: bool, overrides: dict[str, Any]
) -> dict[str, _Planned]:
    """What each notebook needs: its parameters and input hash, or why it does not run."""
    plan: dict[str, _Planned] = {}
    for nb in books:
        output = out_dir / nb.name
        stamp_path = out_dir / f"{nb.stem}.stamp.json"
        try:
            params = parameters_for(prof, nb, res, overrides)
        except Exception as exc:
            failed = NotebookResult(nb.stem, "failed", error=redact_text(str(exc)), failure=classify_failure(exc))
            plan[nb.stem] = _Planned(failed)
            continue
        digest = inputs_hash(nb, params)
        stamp = _read_stamp(stamp_path) if output.exists() else {}
        if not force and stamp.get("status") == "ok" and stamp.get("inputs") == digest:
            skipped = NotebookResult(nb.stem, "skipped", output=str(output), tables=stamp.get("tables", []))
            plan[nb.stem] = _Planned(skipped)
            continue
        plan[nb.stem] = _Planned(None, params, digest, output, stamp_path, stamp)
    return plan


def _read_stamp(path: Path) -> dict[str, Any]:
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        return {}


def last_good(stamp: dict[str, Any]) -> dict[str, Any]:
    """The last successful run a stamp knows of: itself when it succeeded, else the one it carries."""
    if stamp.get("status") == "ok":
        keep = ("finished", "profile", "parameters", "output")
        return {k: stamp.get(k) for k in keep}
    return dict(stamp.get("last_ok") or {})


def write_table_runs(tables: Iterable[str], stamp: dict[str, Any], results: Path) -> None:
    """Beside each table the run wrote, ``tables/<name>.run.json``: the notebook, profile, parameters, status and
    time of that run, so the report says where every table came from (and which are older than their notebook's
    last attempt)."""
    keep = ("name", "status", "profile", "parameters", "started", "finished", "inputs")
    record = {k: stamp.get(k) for k in keep}
    record["parameters"] = {k: v for k, v in (record["parameters"] or {}).items() if k != "results_dir"}
    for name in tables:
        path = results / "tables" / f"{name}.run.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, portable(redact_text(json.dumps(record, indent=1, default=str))))


@dataclass
class _Run:
    """One run of a plan: the options each finished notebook's outcome needs, and what the run has seen so far."""

    plan: dict[str, _Planned]
    prof: Profile
    html: bool
    budget: Budget | None
    ledger: Path | None
    overrides: dict[str, Any]
    claims_ahead: bool = False
    tasks: list[NotebookTask] = field(default_factory=list)
    bar: Progress = field(init=False)
    spent_before: tuple[int, float] = (0, 0.0)  # the ledger's tokens and dollars when the last notebook finished
    ahead: set[str] = field(default_factory=set)  # papers whose claims are being judged ahead

    def execute(
        self, books: list[Path], *, progress: bool, jobs: int, scheduler: str | None, dashboard: bool
    ) -> list[NotebookResult]:
        """Run the notebooks of the plan that need running as tasks on dask (``jobs`` local workers, or the cluster
        at ``scheduler``), and return the results of all ``books``, in order."""
        todo = [nb for nb in books if self.plan[nb.stem].result is None]
        if todo:
            token, env = write_token(self.plan[todo[0].stem].output.parent), driver_env(None if scheduler else jobs)
            with shared_folder(env, here=scheduler is None):  # the kernels share conditions played, claims judged
                self.tasks = [self._task(nb, env, token) for nb in todo]
                where = scheduler or f"{jobs} local worker{'s' * (jobs > 1)}"
                self.bar = Progress(len(self.tasks), f"notebooks ({self._label()}, {where})", enabled=progress)
                self._dispatch(jobs, scheduler, dashboard)
            self.bar.close()
        return [r for nb in books if (r := self.plan[nb.stem].result) is not None]

    def _task(self, nb: Path, env: dict[str, str], token: tuple[str, str]) -> NotebookTask:
        """The task that runs ``nb`` as planned; a failed attempt is kept beside a good notebook of an earlier run."""
        p = self.plan[nb.stem]
        return NotebookTask(
            key=nb.stem,
            notebook=str(nb),
            source=nb.read_bytes(),
            output=str(p.output),
            results=str(p.params.get("results_dir", p.output.parent.parent)),
            params=p.params,
            env=env,
            token=token,
            keep=last_good(p.previous).get("finished") is not None,
        )

    def _label(self) -> str:
        """The profile's name, and the ``-p`` parameters that changed what some notebook runs."""
        overrides = self.overrides
        changed = sorted({k for p in self.plan.values() for k in p.params if k in overrides and k != "results_dir"})
        return self.prof.name + (f" with -p {', '.join(changed)}" if changed else "")

    def _dispatch(self, jobs: int, scheduler: str | None, dashboard: bool) -> None:
        """Hand the tasks to dask and each outcome to :meth:`done`; what a spent budget left unrun is ``stopped``."""
        with open_client(jobs, scheduler, dashboard=dashboard) as client:
            watch_estimates(client, self.bar.say)
            if self.bar.live:
                watch_cells(client, self.bar.cell)
            for task in run_tasks(client, self.tasks, self.done, ledger=self.ledger):
                self.plan[task.key].result = NotebookResult(task.key, "stopped", error="not run: the budget was spent")

    def done(self, task: NotebookTask, outcome: TaskOutcome) -> bool:
        """Record a finished notebook (spend, page, stamp, claims judged ahead); True when the budget is spent."""
        p = self.plan[task.key]
        refused = outcome.failure is Failure.ESTIMATE_OVER_BUDGET  # it stopped unspent; the others may fit
        error = outcome.error + replay_miss_hint(outcome.failure, Path(task.notebook), p.params, self.overrides)
        spent, stopped = self._settle_budget(task.key, outcome.failure)
        output = Path(outcome.output or p.output)
        error = self._export_page(output, error)
        status = "stopped" if refused else outcome.status
        result = NotebookResult(
            task.key, status, round(outcome.seconds, 2), error, str(output), outcome.tables, spent, outcome.failure
        )
        self._write_stamp(p, result, outcome)
        p.result = result
        self.bar.done(task.key, status, outcome.seconds, error)
        self._judge_ready_claims(task.results)
        return stopped and not refused

    def _settle_budget(self, key: str, failure: Failure | None) -> tuple[str, bool]:
        """What notebook ``key`` spent, said with the run's spend so far, and whether the budget is spent (by the
        ledger, or as the notebook's BudgetExceeded says); ("", False) in a run without a budget."""
        if self.ledger is None or self.budget is None:
            return "", False
        tokens, usd, calls = read_ledger(self.ledger)
        spent = f"{tokens - self.spent_before[0]:,} tokens, ${usd - self.spent_before[1]:.4f}"
        self.spent_before = (tokens, usd)
        total, stopped = spend_line(tokens, usd, calls, self.budget)
        self.bar.say(f"{key}: spent {spent}; run so far: {total}")
        return spent, stopped or failure is Failure.BUDGET_EXCEEDED

    def _export_page(self, output: Path, error: str) -> str:
        """The HTML page of the executed notebook ``output`` (when the run makes pages); ``error`` with a failed
        export said, as the page is a convenience that does not change the notebook's status."""
        if self.html and output.exists():
            try:
                export_html(output)
            except Exception as exc:
                return (error + "; " if error else "") + f"HTML export failed: {exc}"
        return error

    def _write_stamp(self, p: _Planned, result: NotebookResult, outcome: TaskOutcome) -> None:
        """The notebook's stamp (what ran, on what inputs, where, and its last good run when this one was not), the
        run records beside its tables; after a good run, what its last run wrote and this one did not goes."""
        stamp = {**asdict(result), "inputs": p.digest, "profile": self.prof.name, "parameters": p.params}
        del stamp["failure"]
        stamp["units"] = units_written(outcome.units)
        if result.status == "ok":  # what its last run wrote and this one did not: no executed notebook made it
            for line in clear_stale(p.stamp.parent.parent, result.name, outcome.tables, stamp["units"], p.previous):
                self.bar.say(f"{result.name}: removed {line}, which this run no longer writes")
        stamp["sandbox"] = os.environ[SANDBOX_ENV]
        stamp.update(host=outcome.host, started=outcome.started, finished=outcome.finished)
        good = last_good(p.previous)
        if result.status != "ok" and good:
            stamp["last_ok"] = good
        write_atomic(p.stamp, portable(redact_text(json.dumps(stamp, indent=1, default=str))))
        write_table_runs(outcome.tables, stamp, p.stamp.parent.parent)

    def _judge_ready_claims(self, results: str) -> None:
        """With ``claims_ahead``: judge, on a background thread, the claims of each paper whose tables no notebook
        left to run may write again (the engine's check on declared truth with the first)."""
        if not self.claims_ahead:
            return
        left = [t.key for t in self.tasks if self.plan[t.key].result is None]
        written = {t for k in self.plan if (r := self.plan[k].result) is not None for t in r.tables}
        if ready := [paper for paper in papers_ready(written, left) if paper not in self.ahead]:
            from tomlib.claims import engine_check_ahead, judge_ahead  # pandas, scipy: once a paper is done

            first = not self.ahead
            self.ahead.update(ready)
            judge_ahead(results, ready)
            if first:  # then REPORT's check of the engine on declared truth, on the same thread
                engine_check_ahead(results)


def papers_ready(written: Iterable[str], left: Iterable[str]) -> list[str]:
    """The papers of the tables ``written`` (``paper_id.table_id``) that no notebook ``left`` to run may write
    again: a notebook may write the papers its name holds (``01_adaptive_tom_table1``), and one whose name holds
    none may write any, so while it is left no paper is ready."""
    from tomlib.claims import PAPERS

    holds = [[p for p in PAPERS if f"_{p}_" in f"_{stem}_"] for stem in left]
    if not all(holds):
        return []
    busy = {p for named in holds for p in named}
    return sorted({t.split(".", 1)[0] for t in written} & set(PAPERS) - busy)


_KEEP_REQUESTS = frozenset({"results_dir", "model", "models", "llm_mode"})
"""Parameters a run may change without changing what the notebook asks its model (the model's own are the miss's)."""


def replay_miss_hint(failure: Failure | None, notebook: Path, params: dict[str, Any], overrides: dict[str, Any]) -> str:
    """For a notebook whose replay missed in a run that changed its parameters (``-p seed 3``): the recorded
    transcripts are of its defaults, and, where its ``model`` parameter may be left empty, that runs the rest."""
    changed = sorted(k for k in overrides if k in params and k not in _KEEP_REQUESTS)
    if failure is not Failure.REPLAY_MISS or not changed:
        return ""
    said = ", ".join(f"{k}={params[k]!r}" for k in changed)
    hint = f" The recorded transcripts answer {notebook.stem}'s own parameters; this run changed {said}."
    declared = declared_parameters(notebook)
    for name in ("model", "models"):
        doc = str(declared.get(name, {}).get("help", ""))
        if params.get(name, True) and ('""' in doc or "empty" in doc):  # not in params: the default, a model
            hint += f' Without a model (-p {name} ""), it runs under any values (its parameters cell: {doc}).'
    return hint


def summarize(outcomes: Iterable[NotebookResult]) -> str:
    """A human summary: counts, then every failure with its reason."""
    outcomes = list(outcomes)
    counts = {s: sum(o.status == s for o in outcomes) for s in ("ok", "skipped", "failed", "stopped")}
    lines = [f"{counts['ok']} ran, {counts['skipped']} up to date (skipped), {counts['failed']} failed"]
    if counts["stopped"]:
        lines[0] += f", {counts['stopped']} stopped"
    for o in outcomes:
        if o.status == "failed":
            lines.append(f"  FAILED {o.name}: {o.error}" + (f"  (see {o.output})" if o.output else ""))
    refused = [o for o in outcomes if o.status == "stopped" and o.failure is Failure.ESTIMATE_OVER_BUDGET]
    for o in refused:
        lines.append(f"  STOPPED {o.name}: {o.error.split('EstimateOverBudget: ', 1)[-1]}")
    unrun = [o.name for o in outcomes if o.status == "stopped" and o not in refused]
    if unrun:
        lines.append(
            f"  STOPPED: the budget was spent, so {len(unrun)} notebook(s) did not run ({', '.join(unrun)}). Every "
            "answered call is kept in the response store: rerun with a larger --max-usd / --max-tokens to resume."
        )
    return redact_text("\n".join(lines))
