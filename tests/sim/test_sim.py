"""The simulated competent model (issue 25): served over real HTTP, its rows labelled sim:<name>, and the tables'
metrics recovered from its declared competence on the success paths a 135M model never reaches."""

from __future__ import annotations

import asyncio
from pathlib import Path
from statistics import NormalDist

import pytest

from tests.sim.conftest import within_ci
from tomlib.experiments import coalition_programming as cp
from tomlib.experiments import coalition_reasoning as cr
from tomlib.llm import ChatModel, ModelConfig, ResponseStore
from tomlib.programming import TeamConfig
from tomlib.sim import SimServer, SimSpec

pytestmark = pytest.mark.tier("fast")  # the default of this module; a test may name its own


def programming(configs: list[TeamConfig], tasks: int) -> cp.Runs:
    return asyncio.run(
        cp.run_programming(
            configs,
            model="sim",
            llm_mode="auto",
            benchmarks=["humaneval"],
            humaneval_tasks=tasks,
            progress=False,
            on_sandbox=None,
        )
    )


def test_a_call_site_gets_its_own_draw_whichever_identical_prompt_arrives_first(tmp_path: Path) -> None:
    """One task's prompt in two conditions (the same content, two call sites): each condition's reply is the same
    whichever is asked first, as when they are in flight together (a failed CI run's matching round 1, issue 57)."""
    prompt = [{"role": "user", "content": "You are the Reflector.\nSolution 1: a\nSolution 2: b"}]

    def ask(order: list[str]) -> dict[str, str]:
        with SimServer(SimSpec(name="s")) as srv:
            config = ModelConfig(name="s", kind="sim", base_url=srv.base_url, endpoint_id="sim-s")
            m = ChatModel(config, store=ResponseStore(tmp_path / f"{order[0]}.sqlite"))
            try:
                return {site: m.complete_sync(prompt, sample_key=site).content for site in order}
            finally:
                m.close()

    first, second = ask(["matching", "no_matching"]), ask(["no_matching", "matching"])
    assert first == second and first["matching"] != first["no_matching"]  # the same draws, and two of them


@pytest.mark.sim
def test_pass_at_1_and_ftm_are_the_declared_competence(sim: SimServer) -> None:
    spec = sim.spec
    runs = programming([TeamConfig(pm_tom=1, matching=False), TeamConfig(pm_tom=2, matching=False)], tasks=20)
    assert not sim.refused and runs.source == "sim:sim"
    f = cp.episode_frame(runs)
    # the team's answer is an engineer's code, right with p_code whoever the PM ranks first
    assert len(f) == 200 and within_ci(int(f["answer_passed"].sum()), len(f), spec.p_code)
    # every engineer's code too (HumanEval's canonical solutions pass in the sandbox; the wrong ones do not)
    assert within_ci(int(f["engineers_passed"].sum()), int(f["engineers"].sum()), spec.p_code)
    # FTM in round 1: an engineer is trusted (score >= 0.5 at epsilon 0.25) when it followed and the PM's noisy
    # score stayed above 0.5, or did not follow and the noise lifted it there
    above = [1 - NormalDist(mean, spec.score_noise).cdf(0.5) for mean in (spec.score_followed, spec.score_ignored)]
    truth = spec.p_follow * above[0] + (1 - spec.p_follow) * above[1]
    first = f[f["round"] == 1]
    hits = round(float((first["ftm"] / 100 * 4).sum()))
    assert within_ci(hits, 4 * len(first), truth)
    # and the table carries the label, with no paper value beside it
    t1 = cp.table1(runs)
    assert set(t1["source"]) == {"sim:sim"} and t1["paper_value"].isna().all()


@pytest.mark.parametrize(
    "sim", [SimSpec(name="drift", p_follow=1.0, follow_later={"Engineer1": 0.0, "Engineer2": 0.0})], indirect=True
)
def test_the_coalition_changes_when_the_scores_drift(sim: SimServer) -> None:
    runs = programming([TeamConfig(pm_tom=1, matching=True)], tasks=6)
    f = cp.episode_frame(runs)
    dropped = f["team"].map(lambda t: "Engineer1" not in t and "Engineer2" not in t)
    assert not dropped[f["round"] == 1].all()  # round 1: everyone follows, the stable coalition may hold 1 or 2
    assert dropped[f["round"] == 5].all()  # after the re-match, the two who stopped following are out
    assert f["rematch_signal"].any()


@pytest.mark.sim
@pytest.mark.parametrize("sim", [SimSpec(name="mc", p_choice=0.6)], indirect=True)
def test_each_agents_multiple_choice_answers_are_right_at_the_declared_rate(sim: SimServer, isolated: Path) -> None:
    from tomlib.trace import load_runs

    runs = asyncio.run(
        cr.run_reasoning(
            ["chateval"], model="sim", llm_mode="auto", aqua_questions=20, mmlu_questions=0, progress=False
        )
    )
    assert not sim.refused and runs.source == "sim:sim"
    events = load_runs(isolated / "results", kinds=["env_state", "action"])
    truth = {
        (r.condition, r.episode): r.payload["truth"]
        for r in events.itertuples()
        if r.kind == "env_state" and "truth" in r.payload
    }
    answers = [(r.condition, r.episode, r.payload["action"]) for r in events.itertuples() if r.kind == "action"]
    hits = sum(letter == truth[(c, e)] for c, e, letter in answers)
    assert len(answers) >= 100 and within_ci(hits, len(answers), sim.spec.p_choice)


def test_a_prompt_the_simulation_does_not_know_is_refused_not_invented(sim: SimServer) -> None:
    from tomlib.llm import ChatModel, ModelCallFailed

    chat = ChatModel.from_name("sim", mode="auto")
    with pytest.raises(ModelCallFailed, match="no rule for the prompt"):
        chat.complete_sync([{"role": "user", "content": "Write a haiku."}], sample_key={"experiment": "t"})
    assert sim.refused


def test_a_typo_in_the_simulated_models_spec_fails_where_the_registry_is_read(tmp_path: Path) -> None:
    from tomlib.llm import ConfigError, load_models

    registry = tmp_path / "models.yaml"
    registry.write_text("models:\n  sim:\n    kind: sim\n    sim:\n      p_cod: 0.7\n")
    with pytest.raises(ConfigError, match="p_cod"):
        load_models(registry)
    registry.write_text("models:\n  sim:\n    kind: openai\n    sim:\n      p_code: 0.7\n")
    with pytest.raises(ConfigError, match="kind openai"):
        load_models(registry)
    registry.write_text("models:\n  sim:\n    kind: sim\n    sim:\n      p_code: 0.7\n")
    assert load_models(registry)["sim"].identity()["endpoint"].startswith("tomlib.sim:")
