"""A class's working copy of the notebooks (``./reproduce.sh lab``): students edit and save copies, so JupyterLab's
autosave never writes outputs into the committed notebooks (whose hash the runner stamps). Class work writes into
the class's own results folder (``classroom/results``) and its own response store, never into the researcher's
``results/``: the lab's kernels and terminals get ``TOMLIB_RESULTS`` and ``TOMLIB_STORE`` pointing there, and the
runner sends notebooks it runs from a class folder there too. JupyterLab's news and update pop-ups are switched off
for the class."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from tomlib.paths import project_root

FOLDER = "classroom"
MARKER = ".tomlib-classroom"  # in a class folder: notebooks run from it write into its own results folder
RESULTS = "results"
STORE = Path(".tomlib") / "responses.sqlite"
# JupyterLab reads default overrides for every user from this file in its application settings folder
LAB_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False},
    # the class plan (README.md) and any Markdown open rendered, as a page, not as source
    "@jupyterlab/docmanager-extension:plugin": {"defaultViewers": {"markdown": "Markdown Preview"}},
}
PLAN = "README.md"
HOW_TO_STOP = (
    "Stop the lab: File > Shut Down in the browser, or Ctrl-C twice in this terminal. Reset a notebook to the "
    "original: ./reproduce.sh lab --reset 01 (the class's copy is kept in classroom/.reset/)."
)


def prepare(folder: str | os.PathLike[str] | None = None) -> Path:
    """Copy the notebooks and the class plan into ``folder`` (default ``classroom/``) where a copy is missing, never
    over a student's saved work; make the class's own results folder beside them; switch off JupyterLab's news.
    Returns the folder."""
    work = Path(folder) if folder else project_root() / FOLDER
    work.mkdir(parents=True, exist_ok=True)
    source = project_root() / "notebooks"
    copied = []
    for nb in sorted([*source.glob("*.ipynb"), source / "README.md"]):
        target = work / nb.name
        if nb.exists() and not target.exists():
            shutil.copyfile(nb, target)
            copied.append(nb.name)
    results = work / RESULTS
    if results.is_symlink():  # an older lab linked the researcher's results here: drop the link, never its target
        results.unlink()
    results.mkdir(exist_ok=True)
    (work / MARKER).write_text(
        "Notebooks run from this folder (JupyterLab, or `.venv/bin/tomlib run --notebooks-dir` on it) write into "
        f"{RESULTS}/ here, never into the project's results/.\n"
    )
    quiet_lab()
    kept = len(list(work.glob("*.ipynb"))) - sum(c.endswith(".ipynb") for c in copied)
    print(
        f"{work}: {len(copied)} file(s) copied, {kept} notebook(s) kept as the class left them; class results in "
        f"{results} (the project's results/ is not touched)"
    )
    return work


def lab_env(work: str | os.PathLike[str]) -> dict[str, str]:
    """The environment of the class's JupyterLab (its kernels and terminals): results and recorded responses in the
    class folder."""
    folder = Path(work).resolve()
    return {"TOMLIB_RESULTS": str(folder / RESULTS), "TOMLIB_STORE": str(folder / STORE)}


def class_folder(path: str | os.PathLike[str]) -> Path | None:
    """The class folder (one :func:`prepare` made) that holds ``path``, or None."""
    where = Path(path).resolve()
    for folder in (where, *where.parents):
        if (folder / MARKER).is_file():
            return folder
    return None


def class_results(paths: Iterable[str | os.PathLike[str]]) -> Path | None:
    """The results folder of the class folder holding every notebook in ``paths`` (None when none is in one).
    Notebooks of a class and others together have no single right place, so that is refused."""
    from tomlib.errors import UsageError

    folders = {class_folder(p) for p in paths}
    if len(folders) > 1:
        raise UsageError(
            "These notebooks come from a class folder and from elsewhere, whose results belong in different places; "
            "run them apart, or choose the results folder with --results DIR."
        )
    folder = folders.pop() if folders else None
    return folder / RESULTS if folder else None


def reset(names: Sequence[str], folder: str | os.PathLike[str] | None = None) -> list[Path]:
    """Put the original of each named notebook (stem, number prefix or file name) back in the class folder; the
    class's copy moves to ``.reset/<time>/`` there, never deleted. Returns the copies moved aside."""
    import time

    from tomlib.errors import UsageError

    work = Path(folder) if folder else project_root() / FOLDER
    aside = work / ".reset" / time.strftime("%Y%m%d-%H%M%S")
    series = sorted((project_root() / "notebooks").glob("*.ipynb"))
    originals = []
    for name in names:
        stem = Path(name).name.removesuffix(".ipynb")
        found = [nb for nb in series if nb.stem == stem] or [nb for nb in series if nb.stem.startswith(stem)]
        if len(found) != 1:
            raise UsageError(
                f"--reset {name}: {'no notebook' if not found else 'several notebooks'} of the series "
                f"{'is' if not found else 'are'} called that; name one by its number (01) or its file name."
            )
        originals += found
    moved = []
    for original in originals:
        copy = work / original.name
        if copy.exists():
            aside.mkdir(parents=True, exist_ok=True)
            copy.rename(aside / original.name)
            moved.append(aside / original.name)
        shutil.copyfile(original, copy)
    return moved


def lab_command(argv: Sequence[str] = (), folder: str | os.PathLike[str] | None = None) -> tuple[list[str], Path]:
    """Prepare the class folder; return the JupyterLab command line on it, opening the class plan rendered, and the
    folder."""
    work = prepare(folder).resolve()
    return [sys.executable, "-m", "jupyter", "lab", f"--notebook-dir={work}", *argv, str(work / PLAN)], work


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m tomlib.classroom [--prepare | --reset NOTEBOOK... | JupyterLab options]``: what ``./reproduce.sh
    lab`` runs (``--prepare``: the class folder only, as binder/postBuild does)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["--prepare"]:  # the class folder and the lab's settings, no lab (binder/postBuild)
        prepare()
        return
    if args[:1] == ["--reset"]:
        names = [a for a in args[1:] if not a.startswith("-")]
        if not names:
            from tomlib.errors import UsageError

            raise UsageError("--reset needs the notebooks to reset, e.g. ./reproduce.sh lab --reset 01 06")
        for kept in reset(names):
            print(f"kept the class's copy as {kept}")
        print(f"reset {len(names)} notebook(s) to the original; start the lab again with ./reproduce.sh lab")
        return
    command, work = lab_command(args)
    os.environ.update(lab_env(work))
    print(HOW_TO_STOP, flush=True)
    os.execv(command[0], command)


def quiet_lab(prefix: str | os.PathLike[str] | None = None) -> Path:
    """Merge :data:`LAB_OVERRIDES` into ``<prefix>/share/jupyter/lab/settings/overrides.json``."""
    path = Path(prefix or sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    current = json.loads(path.read_text()) if path.exists() else {}
    for plugin, settings in LAB_OVERRIDES.items():
        current.setdefault(plugin, {}).update(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=1))
    return path


if __name__ == "__main__":
    from tomlib.errors import TomlibError

    try:
        main()
    except TomlibError as exc:  # one line naming the fix, as the command line says it
        print(f"reproduce.sh lab: {exc}", file=sys.stderr)
        sys.exit(2)
