"""Command line: ``.venv/bin/tomlib run | sweep | cache | report | view | runs | models | plan | book | class |
check-agent``
(``python -m tomlib`` in the project's environment)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any


def _budget(args: argparse.Namespace, profile: Any) -> Any:
    """The profile's budget with --max-usd / --max-tokens laid over it."""
    from tomlib.llm import Budget

    base = profile.budget or Budget()
    return Budget(
        max_tokens=args.max_tokens if args.max_tokens is not None else base.max_tokens,
        max_usd=args.max_usd if args.max_usd is not None else base.max_usd,
    )


def _results_of_run(args: argparse.Namespace, profile: Any, overrides: dict[str, Any]) -> Any:
    """Where ``run`` writes: the series' folder for the series; a side run's own (``results/side/<what changed>/``)
    unless --results or --replace-series says otherwise, said in one line before it starts (:mod:`.runner._side`).
    Notebooks of another folder (--notebooks-dir: a class's, your own) are no run of the series: they write where
    they always did (--results, else a class's own folder, else ``results/``)."""
    from pathlib import Path

    from tomlib.runner import check_overrides, find_notebooks, notebooks_dir, results_for_run, where_to_write

    chosen = find_notebooks(args.notebooks, args.notebooks_dir)
    books = [nb for nb in chosen if args.notebooks or nb.stem not in profile.skip]
    check_overrides(books, overrides)  # a typo is named before any line about where the run goes
    series = results_for_run(args.notebooks, args.notebooks_dir, None)
    other_folder = args.notebooks_dir and Path(args.notebooks_dir).resolve() != notebooks_dir().resolve()
    if other_folder:
        if args.replace_series:
            from tomlib.errors import UsageError

            raise UsageError(
                "--replace-series is for a side run of the series' own notebooks; notebooks of --notebooks-dir write "
                "where --results says (else results/): drop --replace-series."
            )
        return results_for_run(args.notebooks, args.notebooks_dir, args.results)
    folder, line = where_to_write(
        profile,
        books,
        overrides,
        series,
        results=args.results,
        replace_series=args.replace_series,
        waves=args.stop_when_decided,  # a profile that stops when decided is not the series' already
    )
    if line:
        print(line, flush=True)
    return folder


def _cmd_run(args: argparse.Namespace) -> int:
    from tomlib.report import build_report
    from tomlib.runner import load_profile, parse_cli, run_notebooks, summarize

    profile = load_profile(args.profile)
    overrides = parse_cli(args.parameters or (), args.parameters_yaml)
    results = _results_of_run(args, profile, overrides)
    common: dict[str, Any] = {
        "force": args.force,
        "results": results,
        "directory": args.notebooks_dir,
        "html": not args.no_html,
        "budget": _budget(args, profile),
        "jobs": args.jobs,
        "scheduler": args.scheduler,
        "overrides": overrides,
        "sandbox": args.sandbox,
        "spend_to_budget": args.spend_to_budget,
        "dashboard": args.dashboard,
    }
    if args.stop_when_decided or profile.stop_when_decided:  # notebooks with sizes run in waves (tomlib.planning)
        from tomlib.planning import run_in_waves

        claims = [c for c in (args.claims or "").split(",") if c] or profile.claims
        outcomes, _ = run_in_waves(
            profile, args.notebooks, waves=profile.waves if args.waves is None else args.waves, claims=claims, **common
        )
    else:
        outcomes = run_notebooks(profile, args.notebooks, **common, claims_ahead=True)  # the report follows
    report = build_report(results)
    print(summarize(outcomes))
    print(f"report: {report.with_name('REPORT.html')} (open it in a browser; REPORT.md beside it)")
    return 1 if any(o.status in ("failed", "stopped") for o in outcomes) else 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    import pandas as pd

    from tomlib.runner import load_profile, sweep

    profile = load_profile(args.profile)
    index = sweep(
        args.notebook,
        args.grid,
        jobs=args.jobs,
        profile=profile,
        name=args.name,
        results=args.results,
        budget=_budget(args, profile),
        scheduler=args.scheduler,
        ship_results=args.ship_results,
        sandbox=args.sandbox,
        spend_to_budget=args.spend_to_budget,
        dashboard=args.dashboard,
    )
    df = pd.read_csv(index, keep_default_na=False)
    failed = df[df["status"] != "ok"]
    print(f"{len(df) - len(failed)} of {len(df)} runs ok; index: {index}; tables: {index.with_name('results.csv')}")
    for row in failed.itertuples():
        wrote = f" (after writing {row.tables})" if row.tables else ""
        print(f"  {str(row.status).upper()} {row.run_id}{wrote}: {row.error}")
    return 1 if len(failed) else 0


def _cmd_cache(args: argparse.Namespace) -> int:
    from tomlib.llm import ResponseStore

    store = ResponseStore(args.store)
    if args.action == "stats":
        rows = store.stats()
        print(f"store: {store.path} ({len(store)} responses)")
        for r in rows:
            print(
                f"  {r['experiment']:<32} {r['model']:<60} {r['responses']:>6} responses "
                f"{r['prompt_tokens'] + r['completion_tokens']:>9} tokens"
            )
        size = store.bytes_stored()
        if size["rows"]:
            print(
                f"  {size['file_bytes'] / 2**20:.1f} MB on disk, {size['file_bytes'] / size['rows']:,.0f} bytes a "
                f"response (request {size['request_bytes'] / size['rows']:,.0f} and reply "
                f"{size['response_bytes'] / size['rows']:,.0f} as stored)"
            )
    elif args.action == "compact":
        done = store.compact(train_new=args.train, progress=True)
        print(
            f"compacted {store.path}: {done['rewritten']:,} of {done['rows']:,} responses rewritten; "
            f"{done['bytes_before'] / 2**20:.1f} MB -> {done['bytes_after'] / 2**20:.1f} MB"
        )
    elif args.action == "export":
        if not args.out:
            print("cache export needs --out FILE.jsonl.gz", file=sys.stderr)
            return 2
        keys = None
        if args.used_in:  # only what the runs under that results folder asked for: a transcript without stale calls
            from tomlib.trace import load_runs

            calls = load_runs(args.used_in, kinds=["llm_call"])
            keys = {p["key"] for p in calls["payload"]} if len(calls) else set()
        n = store.export(args.out, experiment=args.experiment, model=args.model, keys=keys)
        print(f"exported {n} responses to {args.out}")
    elif args.action == "import":
        total = sum(store.import_file(f) for f in args.files)
        print(f"imported {total} new responses from {len(args.files)} file(s)")
    elif args.action == "prune":
        older = args.older_than * 86400 if args.older_than is not None else None
        if args.experiment is None and args.model is None and older is None:
            print(
                "cache prune needs --experiment, --model or --older-than (refusing to delete everything)",
                file=sys.stderr,
            )
            return 2
        n = store.prune(experiment=args.experiment, model=args.model, older_than_s=older)
        print(f"pruned {n} responses")
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from tomlib.llm import get_model_config
    from tomlib.planning import make_plan, plan_lines, profile_name, select_claims, write_profile
    from tomlib.runner import written_profiles_dir

    get_model_config(args.model)  # an unknown name fails here, with the known ones
    plan = make_plan(
        args.model,
        select_claims(args.claims),
        power=args.power,
        alpha=args.alpha,
        pilots=args.pilot or (),
        max_scale=args.max_scale,
    )
    print("\n".join(plan_lines(plan)))
    if args.no_write:
        return 0
    if not plan.notebooks:
        print("No claim needs a model call at these settings: no profile written.")
        return 0
    name = profile_name(plan, args.claims)
    path = write_profile(plan, args.out or written_profiles_dir() / f"{name}.yaml", args.claims)
    print(f"Profile: {path}; run it with: {_invocation()} run --profile {path if args.out else name}")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from tomlib.report import build_report

    print(build_report(args.results))
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    from tomlib.book import main as book

    return book(args.results, args.out)


def _own_out(folder: str) -> str:
    """``folder`` as one tomlib may write into (see :func:`tomlib.paths.results_folder`), its refusal naming --out."""
    from tomlib.paths import results_folder

    results_folder(folder, option="--out DIR")
    return folder


def _cmd_class(args: argparse.Namespace) -> int:
    from tomlib.errors import UsageError

    if args.action == "edition":
        from tomlib.grading import write_student_edition

        out = _own_out(args.out or "student-edition")
        written = write_student_edition(out, args.notebooks)
        print(f"{len(written)} notebook(s) of the student edition in {out}/: hand it out")
        return 0
    from tqdm import tqdm

    from tomlib.grading import grade, write_grades

    if not args.submissions or not os.path.isdir(args.submissions):
        raise UsageError(
            f"grade needs the folder of submitted notebooks (got {args.submissions!r}): one folder per student, or "
            "<student>.ipynb files, e.g. `tomlib class grade submissions/ --out grades/`."
        )
    bar = tqdm(total=0, desc="checks", unit="check")

    def tick(done: int, total: int) -> None:
        bar.total = total
        bar.update(done - bar.n)

    out = _own_out(args.out or "grades")
    rows = grade(args.submissions, args.teacher, jobs=args.jobs, progress=tick)
    bar.close()
    table = write_grades(rows, out)
    students = len({r.student for r in rows})
    print(f"{students} student(s), {len(rows)} row(s): {table}; feedback for each in {out}/feedback/")
    return 0


def _cmd_view(args: argparse.Namespace) -> int:
    from tomlib.paths import results_dir
    from tomlib.trace import log_in, read_index
    from tomlib.widgets import find_run, write_page

    run = find_run(_choose_run(args.run, args.results, args.prog), args.results)
    log = log_in(results_dir(args.results) / "runs" / run)
    if log is not None:
        read_index(log, warn=False)  # a damaged log (cut short, compressed twice) is an error here, not an empty page
    page = write_page(run, results=args.results, out=args.out, condition=args.condition, episodes=args.episodes)
    print(f"wrote {page} (opens in any browser, offline; keep the _static/ folder beside it)")
    return 0


def _choose_run(name: str, results: str | None, prog: str) -> str:
    """The run ``view NAME`` opens. A run id is itself, and so is an experiment's only run. An experiment with several
    runs (notebook 02 writes a formal and an ``llm:local`` one, and the formal table again under each of our other
    readings) lists them and opens, among the runs the executed notebooks in results/ use (all its runs when none is
    used), those of the default reading (all of them when none is), the one with the most episodes, the newest on a
    tie. Any other name goes to ``find_run`` as given (an id's prefix; its error lists the experiments there are)."""
    import time

    from tomlib.trace import in_use, list_runs, run_facts, run_reading, run_source

    runs = list_runs(results)
    if any(r.run_id == name for r in runs):
        return name
    mine = [r for r in runs if r.experiment == name]
    if len(mine) < 2:
        return mine[0].run_id if mine else name
    used = in_use(mine, results)
    facts = {r.run_id: run_facts(r) for r in mine}
    reading = {r.run_id: run_reading(facts[r.run_id][0]) for r in mine}
    pool = [r for r in mine if r.run_id in used] or mine
    pool = [r for r in pool if reading[r.run_id] == "default"] or pool
    chosen = max(pool, key=lambda r: (r.episodes or 0, r.modified))
    print(f"{name} has {len(mine)} runs (oldest first; * is the one opened):")
    print(f"  {'run':<48} {'source':<20} {'reading':<28} {'conditions and episodes':<31}  {'size':>9}  written")
    for r in mine:
        start, conditions = facts[r.run_id]
        n, plural = len(conditions), "s" if len(conditions) != 1 else " "
        counts = f"{n:>4} condition{plural} {r.episodes:>6} episodes" if r.episodes is not None else "(no index yet)"
        stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.modified))
        mark = "in use" if r.run_id in used else "unused"
        print(
            f"{'*' if r is chosen else ' '} {r.run_id:<48} {run_source(start):<20} {reading[r.run_id]:<28} "
            f"{counts:<31}  {r.bytes / 1e6:6.1f} MB  {stamp}  {mark}"
        )
    why = "among those the executed notebooks in results/ use" if used else "(none is used by an executed notebook)"
    of = ", of the default reading" if reading[chosen.run_id] == "default" else ""
    print(f"opening {chosen.run_id}: the run with the most episodes {why}{of}; to open another: {prog} view ID")
    return chosen.run_id


def _cmd_runs(args: argparse.Namespace) -> int:
    import time

    from tomlib.paths import results_dir
    from tomlib.trace import (
        in_use,
        list_runs,
        prune_runs,
        remove_stale_attempts,
        run_facts,
        run_reading,
        run_source,
        runs_to_prune,
        stale_attempts,
    )

    runs = list_runs(args.results)
    used = in_use(runs, args.results)
    if args.action == "list":
        if runs:
            print(
                f"{'run':<56} {'source':<20} {'reading':<28} {'written':<16} {'size':>10}  {'used':<6}  "
                f"{'events':>9} {'episodes':>8}"
            )
        for r in runs:
            start, _ = run_facts(r)
            counts = f"{r.events:>9,} {r.episodes:>8,}" if r.events is not None else "(no index yet)"
            stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.modified))
            mark = "in use" if r.run_id in used else "unused"
            print(
                f"{r.run_id:<56} {run_source(start):<20} {run_reading(start):<28} {stamp:<16} "
                f"{r.bytes / 1e6:7.1f} MB  {mark:<6}  {counts}"
            )
        spare = sum(r.bytes for r in runs if r.run_id not in used)
        print(
            f"{len(runs)} run(s), {sum(r.bytes for r in runs) / 1e6:.1f} MB; {spare / 1e6:.1f} MB in runs no "
            "executed notebook uses (`runs prune` removes them)"
        )
        return 0
    doomed = runs_to_prune(runs, used, older_than_days=args.older_than, experiment=args.experiment)
    root = results_dir(args.results)
    if args.dry_run:
        for r in doomed:
            print(f"would remove {r.run_id} ({r.bytes / 1e6:.1f} MB)")
        attempts = stale_attempts(args.results)
        for path in attempts:  # notebooks half-executed by a worker that died (an interrupted run)
            print(f"would remove {path.relative_to(root)} (left by an interrupted run)")
        print(
            f"{len(doomed)} run(s), {sum(r.bytes for r in doomed) / 1e6:.1f} MB and {len(attempts)} stale attempt "
            "file(s) would be freed"
        )
        return 0
    freed = prune_runs(doomed)
    attempts = remove_stale_attempts(args.results)
    print(
        f"removed {len(doomed)} unused run(s), {freed / 1e6:.1f} MB freed, and {len(attempts)} stale attempt file(s); "
        f"{len(runs) - len(doomed)} kept"
    )
    return 0


def _cmd_check_agent(args: argparse.Namespace) -> int:
    """Run the agent conformance check; 0 when every check passes, 1 when one fails (a spec that cannot load: 2)."""
    from tomlib.agents import check_agent

    if os.getcwd() not in sys.path:  # as `python -m` does: a module in the folder you run from is found
        sys.path.insert(0, os.getcwd())
    result = check_agent(
        args.spec,
        tasks=args.tasks,
        seeds=args.seeds,
        block_limit_s=args.block_limit,
        act_timeout_s=args.act_timeout,
    )
    print(result)
    return 0 if result.passed else 1


def _cmd_models(args: argparse.Namespace) -> int:
    import os

    from tomlib.llm import read_models

    models, broken = read_models()
    print(f"{'name':<20} {'kind':<7} {'key':<34} {'USD per 1k tokens in/out':<26} description")
    for name, cfg in models.items():
        key = "no key needed"
        if cfg.api_key_env:
            key = f"${cfg.api_key_env} " + ("set" if os.environ.get(cfg.api_key_env) else "NOT set")
        prices = f"free ({cfg.kind})" if cfg.kind in ("local", "sim") else "no price: no --max-usd"
        if cfg.price_per_1k_input is not None and cfg.price_per_1k_output is not None:
            prices = f"{cfg.price_per_1k_input:g} / {cfg.price_per_1k_output:g}"
        print(f"{name:<20} {cfg.kind:<7} {key:<34} {prices:<26} {' '.join(cfg.description.split())[:60]}")
    for problem in broken.values():  # listed, not fatal: only what uses the entry fails
        print(f"NOT USABLE: {problem}")
    return 0


def _at_least_zero(kind: type) -> Any:
    def parse(text: str) -> Any:
        value = kind(text)
        if value < 0:
            raise argparse.ArgumentTypeError(f"must be 0 or more, got {text}")
        return value

    parse.__name__ = kind.__name__
    return parse


def _budget_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--max-usd", type=_at_least_zero(float), default=None, help="stop live calls after this many dollars"
    )
    p.add_argument(
        "--max-tokens", type=_at_least_zero(int), default=None, help="stop live calls after this many tokens"
    )
    p.add_argument(
        "--spend-to-budget",
        action="store_true",
        help="start a notebook whose cost estimate exceeds what is left of the budget anyway, and stop when the "
        "budget is spent (without it such a notebook is refused before its first call)",
    )


def _engine_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--jobs", type=_at_least_zero(int), default=1, help="notebooks at a time: local dask worker processes"
    )
    p.add_argument(
        "--scheduler", default=None, help="run on an existing dask cluster (tls://HOST:8786) instead of --jobs"
    )
    p.add_argument(
        "--sandbox",
        default=None,
        help="how generated code runs: isolated (default; refuses where it cannot be isolated) or rlimits-only "
        "(runs it anyway, with resource limits only)",
    )
    p.add_argument(
        "--dashboard",
        action="store_true",
        default=None,
        help="serve the local dask cluster's dashboard on 127.0.0.1 and print its address (off by default: any "
        "local user can read it, logs and call stacks included)",
    )


_Subparsers = argparse._SubParsersAction  # what ``add_subparsers`` returns: each ``_add_*`` below adds one command


def _add_run(sub: _Subparsers) -> None:
    """``run``: execute the notebook series (or some notebooks) under a profile, with the engine and budget options."""
    run = sub.add_parser("run", help="execute the notebook series under a profile")
    run.add_argument("notebooks", nargs="*", help="stems or number prefixes (default: all)")
    run.add_argument(
        "--profile", default="default", help="default (offline), smoke, full, sim (simulated model), or a YAML path"
    )
    run.add_argument("--force", action="store_true", help="re-execute notebooks whose outputs are up to date")
    run.add_argument(
        "--results",
        default=None,
        help="results directory (default: results/ for the series; results/side/<what changed>/ for another profile, "
        "model or -p values)",
    )
    run.add_argument(
        "--replace-series",
        action="store_true",
        help="a run with another profile, model or -p values writes into the series' results/ (replacing the outputs "
        "of the notebooks it runs) instead of results/side/<what changed>/",
    )
    run.add_argument("--no-html", action="store_true", help="skip the HTML export")
    run.add_argument("--notebooks-dir", default=None, help="another notebook folder (default: notebooks/)")
    run.add_argument(
        "-p",
        "--parameter",
        dest="parameters",
        nargs=2,
        action="append",
        metavar=("NAME", "VALUE"),
        help="a notebook parameter for this run, over the profile's (as papermill's -p; repeatable)",
    )
    run.add_argument(
        "-y", "--parameters-yaml", dest="parameters_yaml", default=None, help="notebook parameters as a YAML mapping"
    )
    run.add_argument(
        "--stop-when-decided",
        action="store_true",
        help="run size parameters in waves; stop a notebook once every claim it serves is decided (anytime-valid)",
    )
    run.add_argument("--waves", type=int, default=None, help="with --stop-when-decided: looks (default: profile's, 4)")
    run.add_argument("--claims", default=None, help="with --stop-when-decided: claim ids to wait for (default: all)")
    _engine_args(run)
    _budget_args(run)
    run.set_defaults(func=_cmd_run)


def _add_sweep(sub: _Subparsers) -> None:
    """``sweep``: one notebook over a grid of parameter values."""
    sw = sub.add_parser("sweep", help="run one notebook over a parameter grid")
    sw.add_argument("notebook")
    sw.add_argument("--grid", required=True, help="YAML: `parameters: {name: [values]}`, optional `fixed:`")
    sw.add_argument("--profile", default="default")
    _engine_args(sw)
    sw.add_argument(
        "--ship-results",
        action="store_true",
        help="workers send results and recorded responses back through the scheduler even on a shared filesystem",
    )
    sw.add_argument("--name", default=None, help="sweep directory name under results/sweeps/")
    sw.add_argument("--results", default=None)
    _budget_args(sw)
    sw.set_defaults(func=_cmd_sweep)


def _add_cache(sub: _Subparsers) -> None:
    """``cache``: the response store's stats, export, import, prune and compact."""
    ca = sub.add_parser("cache", help="the response store: stats | export | import | prune | compact")
    ca.add_argument(
        "action",
        choices=["stats", "export", "import", "prune", "compact"],
        help="compact: rewrite every response in the current encoding (stores made by older versions shrink about "
        "5x) and give the space back",
    )
    ca.add_argument("files", nargs="*", help="transcripts to import")
    ca.add_argument("--store", default=None, help="store path (default: .tomlib/responses.sqlite)")
    ca.add_argument("--out", default=None, help="export: output .jsonl.gz (e.g. data/transcripts/x.jsonl.gz)")
    ca.add_argument("--experiment", default=None, help="only this experiment (and its sub-experiments)")
    ca.add_argument("--model", default=None, help="only this served model id")
    ca.add_argument("--older-than", type=float, default=None, help="prune: days")
    ca.add_argument(
        "--train",
        action="store_true",
        help="compact: first train a compression dictionary per paper on this store's own calls (worth it for "
        "models whose replies differ from the committed transcripts')",
    )
    ca.add_argument(
        "--used-in", default=None, help="export: only responses the run logs under this results folder asked for"
    )
    ca.set_defaults(func=_cmd_cache)


def _add_report(sub: _Subparsers) -> None:
    """``report``: rebuild ``results/REPORT.md`` and ``REPORT.html``."""
    rep = sub.add_parser("report", help="rebuild results/REPORT.md and REPORT.html")
    rep.add_argument("--results", default=None)
    rep.set_defaults(func=_cmd_report)


def _add_book(sub: _Subparsers) -> None:
    """``book``: the book of the series from the executed notebooks."""
    bk = sub.add_parser(
        "book", help="build the book of the series (results/book/) from the executed notebooks, running none again"
    )
    bk.add_argument("--out", default=None, help="the book's folder (default: results/book)")
    bk.add_argument("--results", default=None)
    bk.set_defaults(func=_cmd_book)


def _add_class(sub: _Subparsers) -> None:
    """``class``: the student edition, and offline grading of submitted notebooks."""
    cl = sub.add_parser("class", help="teaching: write the student edition | grade submitted notebooks offline")
    cl.add_argument("action", choices=["edition", "grade"])
    cl.add_argument("submissions", nargs="?", default=None, help="grade: the folder of submitted notebooks")
    cl.add_argument("--out", default=None, help="edition: folder (default student-edition); grade: default grades")
    cl.add_argument("--notebooks", nargs="*", default=[], help="edition: only these notebooks (stems or numbers)")
    cl.add_argument("--teacher", default=None, help="grade: the teacher's notebooks (default: notebooks/)")
    cl.add_argument("--jobs", type=_at_least_zero(int), default=2, help="grade: checks run at once (default 2)")
    cl.set_defaults(func=_cmd_class)


def _add_view(sub: _Subparsers) -> None:
    """``view``: a run's explorer as a page that opens without Jupyter."""
    vw = sub.add_parser("view", help="write a run's explorer as a page that opens without Jupyter or the internet")
    vw.add_argument(
        "run",
        help="a run id (results/runs/<id>) or an experiment name; of an experiment's several runs, the one with the "
        "most episodes among those the executed notebooks in results/ use (they are listed)",
    )
    vw.add_argument("--condition", default=None, help="open on this condition (default: the run's first)")
    vw.add_argument(
        "--episodes", type=_at_least_zero(int), default=3, help="episodes of that condition drawn in the page"
    )
    vw.add_argument("--out", default=None, help="page path (default: results/views/<run_id>.html)")
    vw.add_argument("--results", default=None)
    vw.set_defaults(func=_cmd_view)


def _add_runs(sub: _Subparsers) -> None:
    """``runs``: list or prune the run logs under ``results/runs``."""
    ru = sub.add_parser("runs", help="the run logs under results/runs: list | prune")
    ru.add_argument("action", choices=["list", "prune"])
    ru.add_argument(
        "--older-than", type=_at_least_zero(float), default=None, help="prune: only runs last written over DAYS ago"
    )
    ru.add_argument("--experiment", default=None, help="prune: only this experiment's runs")
    ru.add_argument("--dry-run", action="store_true", help="prune: say what would go, delete nothing")
    ru.add_argument("--results", default=None)
    ru.set_defaults(func=_cmd_runs)


def _add_models(sub: _Subparsers) -> None:
    """``models``: list the configured models."""
    mo = sub.add_parser("models", help="list the configured models")
    mo.set_defaults(func=_cmd_models)


def _add_check_agent(sub: _Subparsers) -> None:
    """``check-agent``: the conformance check of an agent named by import path (docs/your-agent.md)."""
    ck = sub.add_parser(
        "check-agent",
        help="check your agent against the formal partners in every task: legal actions, determinism, no shared "
        "state, no blocking, episodes that end",
    )
    ck.add_argument("spec", help="the agent's import path: package.module:Class or package.module:Class(key=value)")
    ck.add_argument(
        "--tasks", default=None, help="comma-separated tasks (default: memory_1,memory_n,game1,game2,overcooked)"
    )
    ck.add_argument("--seeds", type=int, default=2, help="seeds per pairing and random rollouts per seat (default 2)")
    ck.add_argument(
        "--block-limit", type=float, default=1.0, help="seconds one act call may hold the event loop (default 1)"
    )
    ck.add_argument("--act-timeout", type=float, default=10.0, help="seconds one act call may take (default 10)")
    ck.set_defaults(func=_cmd_check_agent)


def _add_plan(sub: _Subparsers) -> None:
    """``plan``: the units, calls and cost that give the claims their power, written as a profile."""
    pl = sub.add_parser(
        "plan",
        help="before a run: the units, calls and cost that give the papers' claims their power; writes a profile",
    )
    pl.add_argument("--model", required=True, help="a priced model of configs/models.yaml, e.g. gpt-4o-mini")
    pl.add_argument("--claims", required=True, help="a paper (coalition) or claim ids, comma-separated")
    pl.add_argument("--power", type=float, default=0.8, help="target power at the paper's effect (default 0.8)")
    pl.add_argument("--alpha", type=float, default=0.05, help="two-sided, before Holm's correction (default 0.05)")
    pl.add_argument(
        "--pilot",
        action="append",
        default=None,
        help="a results folder whose runs show the claims' units (repeatable; default results/)",
    )
    pl.add_argument(
        "--max-scale",
        type=float,
        default=1.0,
        help="no size past this many times the full profile's (default 1: the papers' own scale)",
    )
    pl.add_argument(
        "--out",
        default=None,
        help="the profile to write (default .tomlib/profiles/plan-<model>-<claims>.yaml, outside configs/: writing it "
        "reruns nothing of the series)",
    )
    pl.add_argument("--no-write", action="store_true", help="print the plan only")
    pl.set_defaults(func=_cmd_plan)


def build_parser(prog: str = "tomlib") -> argparse.ArgumentParser:
    """The command line: one subcommand per ``_add_*`` function above, in the order ``--help`` lists them."""
    p = argparse.ArgumentParser(prog=prog, description=__doc__)
    p.set_defaults(prog=prog)
    sub = p.add_subparsers(dest="command", required=True)
    for add in (
        _add_run,
        _add_sweep,
        _add_cache,
        _add_report,
        _add_book,
        _add_class,
        _add_view,
        _add_runs,
        _add_models,
        _add_plan,
        _add_check_agent,
    ):
        add(sub)
    return p


def _invocation() -> str:
    """How this command was typed, for its usage line and hints: ``python -m tomlib``, or the script as given
    (``.venv/bin/tomlib``)."""
    first = sys.argv[0] if sys.argv else ""
    return "python -m tomlib" if not first or first.endswith("__main__.py") else first


def _no_permission(exc: PermissionError) -> str:
    """One line for a file this user may not read or write: which, and the ways out."""
    from pathlib import Path

    from tomlib.paths import project_root

    where = f" {exc.filename}" if exc.filename else ""
    if exc.filename and not Path(os.fsdecode(exc.filename)).resolve().is_relative_to(project_root()):
        return (  # a path the user gave (a --pilot, --results, a profile) that another user keeps closed
            f"no permission to use{where} ({exc.strerror or exc}): this user may not open it. Give a folder or file "
            "you may read (and write, where tomlib writes: --results DIR, --out FILE), or ask its owner to open it."
        )
    return (
        f"no permission to use{where} ({exc.strerror or exc}). tomlib writes into the checkout (results/, .tomlib/): "
        "run it as the user who owns the checkout, or point it at a folder you may write "
        "(--results DIR, --out FILE for plan, TOMLIB_STORE=FILE for the response store)."
    )


def _missing_module(module: str, argv: Sequence[str] | None) -> str:
    """One line for a Python without a module tomlib needs: the module, the interpreter, and the command that works
    (the project's .venv, which ``./reproduce.sh`` makes). Paths are relative when run from the checkout."""
    import shlex
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    here = root == Path.cwd().resolve()
    venv = ".venv" if here else str(root / ".venv")
    setup = "./reproduce.sh" if here else str(root / "reproduce.sh")
    if Path(sys.prefix).resolve() == (root / ".venv").resolve():  # the project's own: an interrupted install
        return (
            f"tomlib: error: {venv} ({sys.executable}) has no module '{module}': rerun {setup}, which installs "
            f"tomlib's dependencies there (`{setup} test` adds the `local` model's and the dev tools')"
        )
    words = shlex.join(sys.argv[1:] if argv is None else argv)
    return (
        f"tomlib: error: this Python ({sys.executable}) has no module '{module}', which tomlib needs. "
        f"Run {setup} once (it installs tomlib into {venv}), then: {venv}/bin/tomlib {words}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    from tomlib.errors import TomlibError

    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]  # why: runner._papermill.skip_iri_grammars

    args = build_parser(_invocation() if argv is None else "tomlib").parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # output to a pipe is buffered: a reader gone away shows here, not at exit
        return code
    except TomlibError as exc:  # a cause and a fix, in one line: no traceback for errors a user can cause
        print(f"tomlib: error: {exc}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:  # `python3 -m tomlib` without the project's environment (tomlib's own: a bug)
        if not exc.name or exc.name.partition(".")[0] == "tomlib":
            raise
        print(_missing_module(exc.name, argv), file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nor fail flushing stdout on the way out
        return 141  # 128 + SIGPIPE: what a shell reports for a tool a closed pipe stopped
    except PermissionError as exc:  # a checkout, store or results folder another user owns
        print(f"tomlib: error: {_no_permission(exc)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the workers were shut down on the way out
        why = str(exc) or "interrupted"
        print(
            f"\ntomlib: {why}; the workers were shut down. What finished is kept (stamps, the sweep index, the "
            "response store): rerun the same command to resume.",
            file=sys.stderr,
        )
        return 130


if __name__ == "__main__":
    sys.exit(main())
