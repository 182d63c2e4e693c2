"""Project-level promises: setup files agree, notebooks are committed clean, the two commands are wired."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

from tomlib.paths import project_root

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own

ROOT = project_root()
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _norm(req: str) -> tuple[str, str]:
    """(normalized name without extras, sorted specifier set) of a requirement string."""
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)(\[[^\]]*\])?\s*(.*)$", req)
    assert m, req
    name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
    spec = ",".join(sorted(s.strip() for s in m.group(3).split(",") if s.strip()))
    return name, spec


def test_environment_yml_agrees_with_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_norm(r) for r in project["dependencies"]}
    for extra in ("dev", "local", "lab", "docs"):
        wanted |= {_norm(r) for r in project["optional-dependencies"][extra]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    have: set[tuple[str, str]] = set()
    python = None
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            have |= {_norm(r) for r in dep["pip"]}
        elif dep.startswith("python"):
            python = dep
        elif dep != "pip":
            have.add(_norm(dep))
    assert have == wanted, f"only in environment.yml: {have - wanted}; only in pyproject: {wanted - have}"
    assert python == f"python{project['requires-python']}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_without_outputs_and_has_parameters(path: Path) -> None:
    nb = json.loads(path.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code), "strip outputs"
    params = [c for c in code if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(params) == 1, "exactly one cell tagged 'parameters'"
    source = "".join(params[0]["source"])
    rest = "".join("".join(c["source"]) for c in code if c is not params[0])
    # every notebook writes results; those that call models say how (a formal-only notebook has no llm_mode)
    for name in ("results_dir", *(["llm_mode"] if "llm_mode" in rest else [])):
        assert re.search(rf"^{name}: str\s*=", source, re.M), f"the parameters cell must declare {name}"
    assert not re.search(r"(?i)api_?key", source), "API keys never go in notebook parameters"
    import ast

    import papermill

    body = ast.parse(source).body
    assert all(isinstance(node, ast.AnnAssign) for node in body), "every parameter has a type hint (name: int = 3)"
    assigned = [node.target.id for node in body if isinstance(node, ast.AnnAssign)]  # type: ignore[union-attr]
    declared = papermill.inspect_notebook(str(path))
    assert list(declared) == assigned, "papermill cannot read every parameter line"
    assert all(p["inferred_type_name"] in ("str", "int", "float", "bool") for p in declared.values())
    assert re.match(r"^\d\d_[a-z0-9_]+$", path.stem), "notebooks are named NN_<paper>_<experiment>"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_code_cell_of_a_notebook_is_valid_python(path: Path) -> None:
    """A typo in a cell fails here in a second, not after the series has run (top-level await as in a kernel)."""
    import ast

    cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    for i, cell in enumerate(cells):
        try:
            where = f"{path.name}: code cell {i}"
            compile("".join(cell["source"]), where, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        except SyntaxError as e:
            pytest.fail(f"{e.filename}, line {e.lineno}: {e.msg}")


def test_readme_quick_start_is_the_two_commands_and_ci_runs_the_test_one() -> None:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\s*(\./reproduce\.sh[^\n]*)$", quick, re.M)
    assert commands == ["./reproduce.sh", "./reproduce.sh test"]
    ci = (ROOT / ".ci" / "run").read_text()
    # the same command, with pytest's report of the slowest tests at most
    assert re.search(r"^\./reproduce\.sh test( --durations=\d+)?\s*(#.*)?$", ci, re.M)
    for script in (ROOT / "reproduce.sh", ROOT / ".ci" / "run"):
        assert script.stat().st_mode & 0o111, f"{script.name} must be executable"


@pytest.mark.parametrize(("typo", "meant"), [("tset", "test"), ("tets", "test"), ("lba", "lab"), ("hepl", "help")])
def test_a_mistyped_reproduce_command_is_named_before_any_install(tmp_path: Path, typo: str, meant: str) -> None:
    """``./reproduce.sh tset`` stops at once with the command it is nearest, where it went on to install and then ran
    ``tomlib run tset``. A copy of the script with two notebooks, and no Python on PATH: were the word let through,
    the script would stop at finding Python, installing nothing."""
    import subprocess

    (tmp_path / "notebooks").mkdir()
    for stem in ("00_quickstart", "01_adaptive_tom_table1"):
        (tmp_path / "notebooks" / f"{stem}.ipynb").write_text("{}")
    (tmp_path / "reproduce.sh").write_bytes((ROOT / "reproduce.sh").read_bytes())
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "dirname").symlink_to("/usr/bin/dirname")
    env = {"PATH": str(bin_), "PYTHON": str(tmp_path / "no-python"), "HOME": str(tmp_path)}
    done = subprocess.run(
        ["/bin/bash", str(tmp_path / "reproduce.sh"), typo], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and f"(did you mean '{meant}'?)" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / ".venv").exists()
    for word in ("01", "quickstart", "--profile"):  # a notebook or an option goes on to the runner (here: no Python)
        done = subprocess.run(
            ["/bin/bash", str(tmp_path / "reproduce.sh"), word], env=env, capture_output=True, text=True, timeout=30
        )
        assert "did you mean" not in done.stderr and "needs Python 3.11" in done.stderr, done.stderr


def test_every_profile_loads_and_names_real_notebooks() -> None:
    from tomlib.runner import available_profiles, load_profile

    stems = {p.stem for p in NOTEBOOKS}
    assert {"default", "smoke", "full"} <= set(available_profiles())
    for name in available_profiles():
        prof = load_profile(name)
        assert set(prof.notebooks) <= stems, f"profile {name} configures unknown notebooks"
        assert "api_key" not in json.dumps(prof.model_dump()).lower()
    assert load_profile("default").parameters["llm_mode"] == "replay"


def test_configured_models_load_and_hold_no_keys() -> None:
    from tomlib.llm import load_models

    text = (ROOT / "configs" / "models.yaml").read_text()
    assert not re.search(r"sk-[A-Za-z0-9]{10,}", text)
    models = load_models()
    assert "local" in models and models["local"].kind == "local"
    for cfg in models.values():
        assert cfg.api_key_env is None or re.fullmatch(r"[A-Z][A-Z0-9_]*", cfg.api_key_env)


def test_readme_is_a_newcomers_path_that_cites_the_papers() -> None:
    """At most 150 lines (it was 929 and the project's changelog), the three papers cited with their public address,
    and no prerequisite it does not state: the main job needs no compiler (confseq builds for tests and waves only)."""
    from tomlib.claims import PAPERS, paper_info

    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    for paper in PAPERS:
        info = paper_info(paper)
        assert info.address and f"]({info.address})" in readme, paper
    assert "No compiler" in readme and "g++" in readme.split("./reproduce.sh test` adds", 1)[1]
