"""Issue 51, items 1-3: what tomlib writes to or reads from, where another local user could reach it.

The README's recording recipe once put the store and the results in /tmp, as shared lab machines do. Here an attacker
(uid 4242, or ``nobody`` when the tests run as root) prepares those places first: a results folder of theirs with
``REPORT.md`` linked to a file of the victim's, a spool of planted replies beside the store, a verdict cache saying a
failing program passed. Each must be refused in one line naming the fix, and nothing of the victim's overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from tests._other_users import ATTACKER, NOBODY, give, run_as_nobody
from tomlib.errors import UsageError
from tomlib.paths import results_folder, write_atomic

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


@pytest.fixture
def reachable() -> Iterator[Path]:
    """A folder every user can reach (pytest's tmp_path is root's alone, mode 700)."""
    folder = Path(tempfile.mkdtemp(prefix="tomlib-shared-machine-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def sticky(reachable: Path) -> Path:
    """A folder like /tmp: every user may make entries in it, and only an entry's owner may rename it."""
    return give(reachable / "tmp", os.geteuid(), 0o1777)


# -- 1. results folders -----------------------------------------------------------------------------------------------


def test_write_atomic_replaces_a_planted_link_and_never_follows_it(tmp_path: Path) -> None:
    victim = tmp_path / "bashrc"
    victim.write_text("mine\n")
    (tmp_path / "REPORT.md").symlink_to(victim)
    write_atomic(tmp_path / "REPORT.md", "# report\n")
    assert victim.read_text() == "mine\n"
    assert not (tmp_path / "REPORT.md").is_symlink() and (tmp_path / "REPORT.md").read_text() == "# report\n"
    assert _mode(tmp_path / "REPORT.md") == 0o644 & ~_umask()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_results_folder_of_yours_is_made_without_group_write_even_under_umask_002(sticky: Path) -> None:
    old = os.umask(0o002)
    try:
        made = results_folder(sticky / "rec" / "deeper")
    finally:
        os.umask(old)
    assert made.is_dir() and _mode(made) == 0o755 and _mode(sticky / "rec") == 0o755
    assert results_folder(made) == made


def _group_writable(tmp: Path) -> Path:
    return give(tmp / "rec", os.geteuid(), 0o775)


def _in_open_folder(tmp: Path) -> Path:
    give(tmp / "open", os.geteuid(), 0o777)
    return give(tmp / "open" / "rec", os.geteuid(), 0o755)


def _sticky_itself(tmp: Path) -> Path:
    return give(tmp / "rec", os.geteuid(), 0o1777)


@pytest.mark.parametrize(
    ("make", "why"),
    [
        (_group_writable, "its group can write to it (mode 775)"),
        (_in_open_folder, "any user can write to it (mode 777, no sticky bit)"),
        (_sticky_itself, "Make a folder of yours inside it"),
    ],
    ids=["group-writable", "in-a-world-writable-folder", "a-shared-sticky-folder-itself"],
)
def test_a_results_folder_others_could_write_is_refused(tmp_path: Path, make, why: str) -> None:  # type: ignore[no-untyped-def]
    folder = make(tmp_path)
    with pytest.raises(UsageError) as err:
        results_folder(folder)
    message = str(err.value)
    assert why in message and "--results DIR" in message and "\n" not in message, message


def _plant_report_link(rec: Path, victim: Path, uid: int) -> None:
    """The attacker's ``REPORT.md`` and stamp in ``rec``: a link to the victim's file, owned by the attacker."""
    (rec / "REPORT.md").symlink_to(victim)
    os.lchown(rec / "REPORT.md", uid, uid)


@pytest.mark.as_nobody
@pytest.mark.parametrize("mode", [0o777, 0o755], ids=["open-to-all", "theirs-alone"])
def test_the_runner_refuses_a_results_folder_another_user_made(
    sticky: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int
) -> None:
    """``tomlib run --results /tmp/rec`` when another user made /tmp/rec first: one line, nothing written."""
    from tomlib.__main__ import main

    victim = tmp_path / "bashrc"
    victim.write_text("mine\n")
    rec = give(sticky / "rec", ATTACKER, 0o777)
    _plant_report_link(rec, victim, ATTACKER)
    rec.chmod(mode)
    code = main(["run", "00", "--results", str(rec), "--no-html"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.startswith("tomlib: error: Refusing") and "\n" not in err, err
    assert f"belongs to uid {ATTACKER}" in err and "--results DIR" in err
    assert main(["report", "--results", str(rec)]) == 2  # the report alone, too
    assert f"belongs to uid {ATTACKER}" in capsys.readouterr().err
    assert victim.read_text() == "mine\n" and sorted(p.name for p in rec.iterdir()) == ["REPORT.md"]


@pytest.mark.as_nobody
def test_the_runner_refuses_a_results_folder_holding_another_users_link(
    sticky: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder of ours that was open to others once (now chmod go-w, as the fix said) still holds what they planted."""
    from tomlib.__main__ import main

    victim = tmp_path / "bashrc"
    victim.write_text("mine\n")
    rec = give(sticky / "rec", os.geteuid(), 0o755)
    _plant_report_link(rec, victim, ATTACKER)
    assert main(["sweep", "00", "--results", str(rec), "--grid", _grid(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "1 entry in it belong to another user (REPORT.md)" in err and "\n" not in err, err
    assert victim.read_text() == "mine\n"


def _grid(tmp: Path) -> str:
    (tmp / "grid.yaml").write_text("parameters:\n  tom_order: [0, 1]\n")
    return str(tmp / "grid.yaml")


RESULTS_AS_NOBODY = """
import json, os, sys
from tomlib.errors import UsageError
from tomlib.paths import results_folder, write_atomic
shared = sys.argv[1]
out = {}
for name in ("theirs", "mine-with-their-link", "made-here"):
    try:
        folder = results_folder(os.path.join(shared, name))
        write_atomic(folder / "REPORT.md", "# report")
        out[name] = "used"
    except UsageError as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.as_nobody
def test_as_nobody_a_results_folder_another_user_made_or_planted_is_refused(sticky: Path, reachable: Path) -> None:
    """The victim is ``nobody``, the attacker uid 4242, both in a shared sticky folder like /tmp."""
    victim = give(reachable / "home", NOBODY, 0o755) / "bashrc"
    victim.write_text("nobody's\n")
    os.chown(victim, NOBODY, NOBODY)
    _plant_report_link(give(sticky / "theirs", ATTACKER, 0o777), victim, ATTACKER)
    _plant_report_link(give(sticky / "mine-with-their-link", NOBODY, 0o755), victim, ATTACKER)
    seen = run_as_nobody(RESULTS_AS_NOBODY, str(sticky))
    assert f"belongs to uid {ATTACKER}, not to you (uid {NOBODY})" in seen["theirs"], seen
    assert "belong to another user (REPORT.md)" in seen["mine-with-their-link"], seen
    assert seen["made-here"] == "used" and os.lstat(sticky / "made-here").st_uid == NOBODY
    assert victim.read_text() == "nobody's\n"


def _write_a_table(results: Path) -> None:
    from tomlib.report import write_table

    rows = {"paper_id": "adaptive_tom", "table_id": "table1", "alignment": "misaligned", "player1": "ToM-0"}
    rows |= {"player2": "ToM-0", "task": "memory_1", "metric": "point", "value": 1.0, "source": "formal"}
    write_table(pd.DataFrame([rows]), results=results)


def _write_a_figure(results: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tomlib.report import save_figure

    fig, _ = plt.subplots()
    save_figure(fig, "adaptive_tom.fig3", results=results)
    plt.close(fig)


def _open_a_run_log(results: Path) -> None:
    from tomlib.trace import RunLog

    RunLog("quickstart", results=results).close()


@pytest.mark.parametrize("write", [_write_a_table, _write_a_figure, _open_a_run_log], ids=["table", "figure", "log"])
def test_what_a_notebook_writes_refuses_a_results_folder_others_can_write(sticky: Path, write) -> None:  # type: ignore[no-untyped-def]
    """A notebook run in Jupyter, without the runner, checks the folder too."""
    open_results = give(sticky / "results", os.geteuid(), 0o777)
    with pytest.raises(UsageError, match="any user can write to it"):
        write(open_results)
    assert list(open_results.iterdir()) == []
    open_results.chmod(0o755)
    write(open_results)


def test_a_run_log_never_appends_through_a_planted_link(tmp_path: Path) -> None:
    from tomlib.trace import RunLog

    victim = tmp_path / "victim"
    victim.write_text("mine\n")
    (tmp_path / "res" / "runs" / "quickstart-x").mkdir(parents=True)
    (tmp_path / "res" / "runs" / "quickstart-x" / "events.jsonl").symlink_to(victim)
    with pytest.raises(OSError):
        RunLog("quickstart", run_id="quickstart-x", results=tmp_path / "res")
    assert victim.read_text() == "mine\n"


# -- 2. the response store and its spool ----------------------------------------------------------------------------


def _planted_spool(store: Path, uid: int) -> str:
    """A reply planted in ``<store>.spool/`` by ``uid``, under the key of a request the victim will make."""
    from tomlib.llm._request import request_key

    request = {"model": {"endpoint": "e", "model": "m"}, "sample_key": {"experiment": "quickstart"}, "messages": []}
    key = request_key(request)
    spool = give(store.with_name(store.name + ".spool"), uid, 0o777)
    record = {"key": key, "request": request, "response": {"content": "PLANTED"}, "replace": True}
    (spool / f"{key}.json").write_text(json.dumps(record))
    os.chown(spool / f"{key}.json", uid, uid)
    return key


def test_the_store_is_a_file_of_yours_alone(tmp_path: Path) -> None:
    from tomlib.llm import ResponseStore

    old = os.umask(0)  # a careless umask changes nothing
    try:
        ResponseStore(tmp_path / "s" / "store.sqlite").close()
    finally:
        os.umask(old)
    assert _mode(tmp_path / "s") == 0o700 and _mode(tmp_path / "s" / "store.sqlite") == 0o600
    (tmp_path / "s" / "store.sqlite").chmod(0o644)  # a store made before it was private
    ResponseStore(tmp_path / "s" / "store.sqlite").close()
    assert _mode(tmp_path / "s" / "store.sqlite") == 0o600


def test_a_store_in_a_folder_others_can_write_is_refused(sticky: Path) -> None:
    from tomlib.llm import ResponseStore

    with pytest.raises(UsageError) as err:
        ResponseStore(sticky / "rec.sqlite")
    assert "any user can write to it" in str(err.value) and "TOMLIB_STORE" in str(err.value)
    assert not (sticky / "rec.sqlite").exists()


@pytest.mark.as_nobody
def test_planted_spooled_replies_never_come_back(sticky: Path, tmp_path: Path) -> None:
    """The store where the old recipe put it (/tmp/rec.sqlite), its spool made by another user first."""
    from tomlib.llm import ResponseStore

    key = _planted_spool(sticky / "rec.sqlite", ATTACKER)
    with pytest.raises(UsageError, match=r"Refusing .* as a private folder"):
        ResponseStore(sticky / "rec.sqlite").get(key)
    mine = give(tmp_path / "mine", os.geteuid(), 0o700)  # a private folder, its spool planted while it was open
    key = _planted_spool(mine / "store.sqlite", ATTACKER)
    with pytest.raises(UsageError, match=f"store.sqlite.spool as a private folder: it belongs to uid {ATTACKER}"):
        ResponseStore(mine / "store.sqlite")
    conn = sqlite3.connect(mine / "store.sqlite")
    assert conn.execute("SELECT COUNT(*) FROM responses WHERE key = ?", (key,)).fetchone()[0] == 0


def test_a_spooled_reply_in_a_file_not_yours_alone_is_not_read(tmp_path: Path) -> None:
    from tomlib.llm import ResponseStore

    store = ResponseStore(tmp_path / "store.sqlite")
    key = _planted_spool(tmp_path / "other.sqlite", os.geteuid())  # to borrow a record's shape
    spool = give(tmp_path / "store.sqlite.spool", os.geteuid(), 0o700)
    record = (tmp_path / "other.sqlite.spool" / f"{key}.json").read_text()
    (spool / f"{key}.json").write_text(record)
    (spool / f"{key}.json").chmod(0o666)  # writable by others: not read
    assert store.get(key) is None and store.drain_spool() == 0
    (spool / f"{key}.json").unlink()
    (spool / f"{key}.json").symlink_to(tmp_path / "other.sqlite.spool" / f"{key}.json")  # a link: not followed
    assert store.get(key) is None and store.drain_spool() == 0
    (spool / f"{key}.json").unlink()
    (spool / f"{key}.json").write_text(record)
    (spool / f"{key}.json").chmod(0o600)
    assert store.get(key) == {"content": "PLANTED"}  # the same record, spooled by this user, is read back


STORE_AS_NOBODY = """
import json, sys
from tomlib.errors import UsageError
from tomlib.llm import ResponseStore
out = {}
for name, key in (("shared", sys.argv[2]), ("mine", sys.argv[3])):
    try:
        out[name] = ResponseStore(sys.argv[1] + "/" + name + "/rec.sqlite").get(key)
    except UsageError as exc:
        out[name] = str(exc)
print(json.dumps(out))
"""


@pytest.mark.as_nobody
def test_as_nobody_planted_spooled_replies_never_come_back(sticky: Path) -> None:
    base = give(sticky / "base", NOBODY, 0o755)
    shared = give(base / "shared", NOBODY, 0o777)  # the victim's folder, open to all as /tmp is
    planted = _planted_spool(shared / "rec.sqlite", ATTACKER)
    mine = give(base / "mine", NOBODY, 0o700)
    theirs = _planted_spool(mine / "rec.sqlite", ATTACKER)
    seen = run_as_nobody(STORE_AS_NOBODY, str(base), planted, theirs, packages=True)
    assert "any user can write to it" in seen["shared"], seen
    assert f"rec.sqlite.spool as a private folder: it belongs to uid {ATTACKER}" in seen["mine"], seen


# -- 3. the sandbox's verdict cache ----------------------------------------------------------------------------------

FAILING = "def add(a, b):\n    return a - b\n"
TESTS = "assert add(2, 2) == 4\n"


def _plant_pass(path: Path, uid: int) -> None:
    """A cache file at ``path`` saying the failing ``add`` passed, under the key the check will have."""
    import dataclasses

    from tomlib.sandbox import CheckResult, Limits
    from tomlib.sandbox._cache import check_key
    from tomlib.sandbox._run import isolation_available

    forged = CheckResult(passed=True, status="passed", reason="", seconds=0.1)
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE IF NOT EXISTS checks (key TEXT PRIMARY KEY, result TEXT NOT NULL)")
        for isolation in {(), tuple(isolation_available())}:
            key = check_key(FAILING, TESTS, Limits(), isolation)
            db.execute("INSERT INTO checks VALUES (?, ?)", (key, json.dumps(dataclasses.asdict(forged))))
    db.close()
    os.chown(path, uid, uid)
    path.chmod(0o666)


@pytest.mark.as_nobody
def test_a_planted_verdict_cache_is_refused(sticky: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tomlib.sandbox._cache import CheckCache

    _plant_pass(sticky / "sandbox-checks.sqlite", ATTACKER)
    monkeypatch.setenv("TOMLIB_STORE", str(sticky / "rec.sqlite"))  # the cache sits beside the store
    with pytest.raises(UsageError, match="any user can write to it"):
        CheckCache()
    mine = give(tmp_path / "mine", os.geteuid(), 0o700)
    _plant_pass(mine / "sandbox-checks.sqlite", ATTACKER)  # planted while the folder was open
    with pytest.raises(UsageError, match=f"sandbox-checks.sqlite: it belongs to uid {ATTACKER}"):
        CheckCache(mine / "sandbox-checks.sqlite")


def test_a_verdict_cache_of_yours_is_private_and_its_passes_are_its_own(tmp_path: Path) -> None:
    from tomlib.sandbox._cache import CheckCache

    cache = CheckCache(tmp_path / "c" / "checks.sqlite")
    assert _mode(tmp_path / "c") == 0o700 and _mode(tmp_path / "c" / "checks.sqlite") == 0o600
    [result] = cache.check_many([(FAILING, TESTS)])
    assert result.status == "failed" and cache.hits == 0


CACHE_AS_NOBODY = """
import json, sys
from tomlib.errors import UsageError
from tomlib.sandbox._cache import CheckCache
try:
    CheckCache(sys.argv[1])
    out = {"cache": "used"}
except UsageError as exc:
    out = {"cache": str(exc)}
print(json.dumps(out))
"""


@pytest.mark.as_nobody
def test_as_nobody_a_verdict_cache_another_user_made_is_refused(reachable: Path) -> None:
    mine = give(give(reachable / "home", NOBODY, 0o755) / "store", NOBODY, 0o700)
    _plant_pass(mine / "sandbox-checks.sqlite", ATTACKER)
    seen = run_as_nobody(CACHE_AS_NOBODY, str(mine / "sandbox-checks.sqlite"), packages=True)
    assert f"belongs to uid {ATTACKER}, not to you (uid {NOBODY})" in seen["cache"], seen
