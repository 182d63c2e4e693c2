"""Where tomlib reads its data and writes its results.

Every location can be overridden by an environment variable so that tests, sweeps and notebooks opened
from any working directory agree on one place.

Paths that leave the machine go through :func:`portable`: executed notebooks (papermill records the notebook's
path), pages, stamps and ``REPORT.*`` show the results folder as ``results``, the checkout as ``.`` and the home
folder as ``~``. The sweep index stores run folders relative to the sweep folder; code reading it joins them to it.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

_MARKER = "pyproject.toml"
ENV_TABLES_MANIFEST = "TOMLIB_TABLES_MANIFEST"
"""Set by the runner for its kernels: the file in which every table a notebook writes is named (its worker processes
read it, and import nothing of the report for it)."""
ENV_UNITS_MANIFEST = "TOMLIB_UNITS_MANIFEST"
"""Set by the runner for its kernels: the file in which every units table a notebook writes is named with each source
of its rows (``<paper_id>.<table_id>\t<source>`` a line), so a rerun can clear the sources it no longer writes."""


def project_root() -> Path:
    """The checkout that holds ``pyproject.toml`` and ``tomlib/`` (``TOMLIB_ROOT`` overrides)."""
    env = os.environ.get("TOMLIB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / _MARKER).exists() and (here / "tomlib").is_dir():
        return here
    for parent in [Path.cwd(), *Path.cwd().parents]:
        if (parent / _MARKER).exists() and (parent / "tomlib").is_dir():
            return parent
    return Path.cwd()


def data_dir() -> Path:
    """Committed inputs: paper tables, datasets, layouts, transcripts."""
    return project_root() / "data"


def configs_dir() -> Path:
    """Model and profile configuration (``TOMLIB_CONFIGS`` overrides)."""
    env = os.environ.get("TOMLIB_CONFIGS")
    return Path(env).resolve() if env else project_root() / "configs"


def results_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """Generated outputs; ``override`` (a notebook parameter) beats ``TOMLIB_RESULTS`` beats ``results/``."""
    if override:
        return Path(override).resolve()
    env = os.environ.get("TOMLIB_RESULTS")
    return Path(env).resolve() if env else project_root() / "results"


def transcripts_dir() -> Path:
    """Recorded model responses that make the default profile replay offline."""
    env = os.environ.get("TOMLIB_TRANSCRIPTS")
    return Path(env).resolve() if env else data_dir() / "transcripts"


def store_path() -> Path:
    """The local response store (SQLite); ``TOMLIB_STORE`` overrides."""
    env = os.environ.get("TOMLIB_STORE")
    return Path(env).resolve() if env else project_root() / ".tomlib" / "responses.sqlite"


def cache_dir() -> Path:
    """Derived data worth keeping between processes, such as the solved exact kitchen model (``TOMLIB_CACHE``
    overrides). Only a cache: anything in it can be deleted, and readers rebuild what is missing or unreadable."""
    env = os.environ.get("TOMLIB_CACHE")
    return Path(env).resolve() if env else project_root() / ".tomlib" / "cache"


def webdeps_dir() -> Path:
    """require.js and the widget renderer, fetched by ``./reproduce.sh`` (``TOMLIB_WEBDEPS`` overrides)."""
    env = os.environ.get("TOMLIB_WEBDEPS")
    return Path(env).resolve() if env else project_root() / ".tomlib" / "webdeps"


def _unsafe_on_the_way(folder: Path) -> tuple[Path, str, str] | None:
    """The first folder from ``/`` down to ``folder`` (through its real path, ``folder`` itself excluded) whose entries
    a user other than this one and root could rename or replace, as (folder, why, fix); None when there is none.

    Every such folder must be owned by root or this user, and writable by no one else unless it has the sticky bit
    (as ``/tmp`` has: there only an entry's owner, the folder's owner and root may rename the entry)."""
    me = os.geteuid()
    where = Path(os.path.realpath(folder.parent))
    for parent in (*reversed(where.parents), where):
        st = os.lstat(parent)
        mode = stat.S_IMODE(st.st_mode)
        if st.st_uid not in (0, me):
            return parent, f"it belongs to uid {st.st_uid}, who can rename what is in it", "Move it out of there"
        if mode & 0o022 and not mode & stat.S_ISVTX:
            who = "any user" if mode & 0o002 else "its group"
            return parent, f"{who} can write to it (mode {mode:o}, no sticky bit)", f"Run `chmod go-w {parent}`"
    return None


def _open_to_others(folder: Path, st_mode: int, fix: str) -> tuple[str, str]:
    """(why, remedy) for a folder its group or everyone can write: a shared one such as /tmp (sticky) is not made
    private by chmod, so the remedy there is a folder of one's own inside it."""
    mode = stat.S_IMODE(st_mode)
    who = "any user" if mode & 0o002 else "its group"
    if mode & stat.S_ISVTX:
        return (
            f"{who} can write to it (mode {mode:o})",
            f"Make a folder of yours inside it (`mkdir -m 700 {folder}/NAME`), {fix}",
        )
    return f"{who} can write to it (mode {mode:o})", f"Run `chmod go-w {folder}`, {fix}"


def private_dir(
    path: str | os.PathLike[str],
    *,
    parents: bool = False,
    instead: str = "set XDG_RUNTIME_DIR to a folder of yours with mode 700",
) -> Path:
    """``path`` as a folder no other user can change: made with mode 700 when it is missing (its parent must exist,
    or, with ``parents``, is made too, mode 700), then checked without following links. It must be a real folder
    (not a symbolic link), owned by this user, writable by no one else, and every folder above it owned by root or
    this user and writable by no one else (a folder anyone can write needs the sticky bit, as /tmp has). Anything
    else raises
    :class:`~tomlib.errors.UnsafeLocation` (one line: the path, why, and the fix), because another user who can swap a
    folder decides what runs from it. The check holds at the time of the call: call it again before each use.
    ``instead`` is the other way out the error offers (a setting that moves the folder).
    Stdlib only, so it works in any interpreter that can read ``tomlib/``."""
    from tomlib.errors import UnsafeLocation, UsageError

    folder = Path(os.path.abspath(path))
    fix = f"or {instead}"

    def refuse(why: str, remedy: str) -> UsageError:
        return UnsafeLocation(
            f"Refusing {folder} as a private folder: {why}, so another user could change what tomlib runs from it. "
            f"{remedy}."
        )

    missing = [folder]
    if parents:
        while not os.path.lexists(missing[-1].parent) and missing[-1].parent != missing[-1]:
            missing.append(missing[-1].parent)
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o700)  # the umask can only take bits away
        except FileExistsError:
            pass
        except OSError as exc:
            raise UsageError(
                f"Cannot make the folder {made} ({exc.strerror}). Run from a checkout you can write to, {fix}."
            ) from None
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode):
        raise refuse("it is a symbolic link", f"Remove the link ({folder}), {fix}")
    if not stat.S_ISDIR(st.st_mode):
        raise refuse("it is not a folder", f"Remove it, {fix}")
    if st.st_uid != os.geteuid():
        raise refuse(f"it belongs to uid {st.st_uid}, not to you (uid {os.geteuid()})", f"Use another folder, {fix}")
    if st.st_mode & 0o022:
        raise refuse(*_open_to_others(folder, st.st_mode, fix))
    if bad := _unsafe_on_the_way(folder):
        parent, why, remedy = bad
        raise refuse(f"it is inside {parent}, and {why}", f"{remedy}, {fix}")
    return folder


def private_file(path: str | os.PathLike[str], *, instead: str) -> Path:
    """``path`` as a file of this user's alone, in a folder no other user can change (:func:`private_dir`, made with
    its parents when missing): made empty with mode 600 when missing; an existing one must be a regular file (not a
    link) that this user owns, and loses any read or write bits of others (a store of every prompt and reply is read
    by no one else). Anything else raises :class:`~tomlib.errors.UnsafeLocation` naming the fix (``instead``: the
    setting that moves it)."""
    from tomlib.errors import UnsafeLocation

    target = Path(os.path.abspath(path))
    private_dir(target.parent, parents=True, instead=instead)
    with contextlib.suppress(FileExistsError):
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
    st = os.lstat(target)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        why = (
            "it is a symbolic link"
            if stat.S_ISLNK(st.st_mode)
            else "it is not a regular file"
            if not stat.S_ISREG(st.st_mode)
            else f"it belongs to uid {st.st_uid}, not to you (uid {os.geteuid()})"
        )
        raise UnsafeLocation(
            f"Refusing {target}: {why}, so what tomlib reads from it may not be what it wrote. Remove it, or {instead}."
        )
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(target, stat.S_IMODE(st.st_mode) & 0o700)
    return target


def read_own(path: str | os.PathLike[str]) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (not a link: it is not followed) that this user owns and no one
    else can write; None otherwise, or when it cannot be read. For files whose content decides what runs or what a
    result says (pickles, cached verdicts, spooled replies): call it after :func:`private_dir` on their folder."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            return None
        try:
            return fh.read()
        except OSError:
            return None


def results_folder(path: str | os.PathLike[str], option: str = "--results DIR (or TOMLIB_RESULTS)") -> Path:
    """``path`` as a folder tomlib may write results into, made (with its missing parents) when missing. Refused in
    one line naming the fix (:class:`~tomlib.errors.UnsafeLocation`) when another user owns it or can write to it, when
    an entry in it belongs to another user, or when a folder above it could be changed by another user (see
    :func:`private_dir`): such a user could plant a link there and have a run overwrite a file of yours. Unlike a
    private folder it may be readable by others (and may be a link to a folder of yours). ``option`` is how the
    refusal names the way to choose another."""
    from tomlib.errors import UnsafeLocation, UsageError

    folder = Path(os.path.abspath(path))
    fix = f"choose a folder of yours with {option}"

    def refuse(why: str, remedy: str) -> UsageError:
        return UnsafeLocation(
            f"Refusing {folder} as a results folder: {why}, so another user could plant links there that make a run "
            f"overwrite your files. {remedy}."
        )

    missing = []
    probe = folder
    while not os.path.lexists(probe) and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    if missing and (bad := _unsafe_on_the_way(missing[-1])):  # nothing is made where another user could swap it
        raise refuse(f"it would be made inside {bad[0]}, and {bad[1]}", f"{bad[2]}, or {fix}")
    for made in reversed(missing):
        try:
            os.mkdir(made, 0o755)
            os.chmod(made, 0o755 & ~_umask() | 0o700)  # a umask of 002 would leave it writable by the group
        except FileExistsError:
            pass
        except OSError as exc:
            raise UsageError(
                f"The results folder {folder} is not writable: {made} cannot be made ({exc.strerror}). Fix the "
                f"permissions, or {fix}."
            ) from None
    real = Path(os.path.realpath(folder))
    st = os.stat(real)
    if not stat.S_ISDIR(st.st_mode):
        raise UsageError(f"The results folder {folder} is not a folder. Remove it, or {fix}.")
    if st.st_uid != os.geteuid():
        raise refuse(f"it belongs to uid {st.st_uid}, not to you (uid {os.geteuid()})", fix[0].upper() + fix[1:])
    mode = stat.S_IMODE(st.st_mode)
    if mode & 0o022:
        who = "any user" if mode & 0o002 else "its group"
        remedy = (
            f"Make a folder of yours inside it (`mkdir -m 755 {real}/NAME`)"
            if mode & stat.S_ISVTX
            else (f"Run `chmod go-w {real}`")
        )
        raise refuse(f"{who} can write to it (mode {mode:o})", f"{remedy}, or {fix}")
    if bad := _unsafe_on_the_way(real):
        raise refuse(f"it is inside {bad[0]}, and {bad[1]}", f"{bad[2]}, or {fix}")
    with os.scandir(real) as entries:
        foreign = sorted(e.name for e in entries if e.stat(follow_symlinks=False).st_uid not in (0, os.geteuid()))
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise refuse(
            f"{len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'} in it belong to another user ({shown})",
            f"Remove what you did not make from {real}, or {fix}",
        )
    return folder


def results_for_writing(override: str | os.PathLike[str] | None = None) -> Path:
    """:func:`results_dir`, checked as a folder results may be written into (:func:`results_folder`): what every
    writer of a table, figure, units file or run log asks for."""
    return results_folder(results_dir(override))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, mode: int = 0o644) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``: a reader sees the
    old file or the whole new one, and a link planted at ``path`` is replaced, never followed. ``mode`` (less the
    umask) is the file's; text is UTF-8 (lone surrogates kept as they came)."""
    target = Path(path)
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode & ~_umask())
            fh.write(raw)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _ours_alone(path: str) -> bool:
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not st.st_mode & 0o077


def scratch_base() -> Path:
    """The folder in which the runner makes its scratch folders (with ``tempfile.mkdtemp``), such as dask's for every
    scheduler and worker. ``$XDG_RUNTIME_DIR/tomlib`` when the runtime folder is this user's alone (mode 700); else
    ``.tomlib/tmp`` in the project, beside its other state, when that can be private (:func:`private_dir`); else the
    system's temp folder when it has the sticky bit, as /tmp has (a folder ``mkdtemp`` makes there is as private: mode
    700, a name no one can take first, and no one else may rename it). Never a fixed name in a shared folder."""
    from tomlib.errors import UsageError

    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and _ours_alone(runtime):
        return private_dir(Path(runtime) / "tomlib")
    try:
        return private_dir(private_dir(project_root() / ".tomlib") / "tmp")
    except UsageError:  # e.g. a .tomlib made under umask 002, or a checkout this user cannot write
        shared = Path(tempfile.gettempdir())
        st = os.lstat(shared)
        if stat.S_ISDIR(st.st_mode) and (st.st_mode & stat.S_ISVTX or _ours_alone(str(shared))):
            return shared
        raise


_BOUNDARY = r"(?=[/\\\"'\s<>)\],;:&]|$)"  # a whole path (or its prefix up to a separator), not a longer name


def portable(text: str, extra: dict[str, str] | None = None) -> str:
    """``text`` with this machine's absolute paths written as they read anywhere: the results folder as
    ``results``, the checkout as ``.``, the home folder as ``~`` (and ``extra``: path → name). For what leaves the
    machine: exported pages, executed notebooks, the report and the stamps."""
    pairs = {str(results_dir()): "results", str(project_root()): ".", str(Path.home()): "~", **(extra or {})}
    anchors: dict[str, str] = {}
    for path, name in pairs.items():
        for form in {path, os.path.realpath(path)}:
            if len(form) > 1 and form.startswith("/"):
                anchors.setdefault(form, name)
    for path in sorted(anchors, key=len, reverse=True):  # the longest first: results inside the checkout
        if path in text:
            text = re.sub(re.escape(path) + _BOUNDARY, anchors[path].replace("\\", r"\\"), text)
    return text


def portable_file(path: str | os.PathLike[str], extra: dict[str, str] | None = None) -> None:
    """:func:`portable` on a text file, in place."""
    p = Path(path)
    text = p.read_text(encoding="utf-8", errors="surrogateescape")
    clean = portable(text, extra)
    if clean != text:
        write_atomic(p, clean)


@contextlib.contextmanager
def environ(values: dict[str, str]) -> Iterator[None]:
    """Set environment variables for the block (kernels started inside inherit them), then restore them."""
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
