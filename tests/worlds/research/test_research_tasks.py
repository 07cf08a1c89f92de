"""The research world's corpus and tasks: the same corpus from the same seed in another process,
a corpus built once into the template, the spend in the verdict, the `cost` check, citations
required, an agent that answers from the first search result failing, and task files that are
exactly what the generator writes from the corpus; the long tasks' length and a stale figure
failing one."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
from mcpsim_worlds.research.generate import main as generate

from mcpsim.engine import Episode, TemplateCache
from mcpsim.grading import Verifier
from mcpsim.tasks import load_tasks
from mcpsim.tasks._rubric import Cost
from mcpsim.tasks._scenario import oracle_answer, run_actions, task_episode
from mcpsim.world import load_world
from tests.conftest import CLEAN_ENV

CORPUS_HASH = """
import hashlib, sys
from mcpsim import Episode
from mcpsim_worlds.research import world
episode = Episode.create(world, seed=int(sys.argv[1]), scale="small")
rows = episode.query("SELECT id, kind, title, source, published, body FROM documents ORDER BY id")
digest = hashlib.sha256(repr([tuple(r.values()) for r in rows]).encode()).hexdigest()
print(digest, episode.state_hash(), len(rows))
"""


def corpus_hash(seed: int, hash_seed: str) -> list[str]:
    env = {**CLEAN_ENV, "PYTHONHASHSEED": hash_seed}
    out = subprocess.run([sys.executable, "-c", CORPUS_HASH, str(seed)], capture_output=True, text=True, env=env,
                         timeout=300, check=True)  # fmt: skip
    return out.stdout.strip().splitlines()[-1].split()  # after any log line


WORLD = "research"  # for the `world` and `task_set` fixtures


@pytest.fixture(scope="module")
def verifier(world, task_set):
    return Verifier(world, task_set, templates=TemplateCache())


def test_the_same_seed_builds_the_same_corpus_in_two_processes():
    """Two processes (other hash seeds, other template caches) draw the same documents and state
    hash from seed 0; seed 1 draws another corpus."""
    first, second = corpus_hash(0, "1"), corpus_hash(0, "987")
    assert first == second and int(first[2]) > 300
    other = Episode.create(load_world("research"), seed=1, scale="small", templates=TemplateCache())
    assert other.state_hash() != first[1]


def test_the_corpus_and_its_index_are_built_once_into_the_template(world):
    cache = TemplateCache()
    episodes = [Episode.create(world, seed=0, scale="small", templates=cache) for _ in range(3)]
    assert cache.builds == 1
    for episode in episodes:  # every clone searches at once: the FTS5 index is in the template's pages
        assert episode.query("SELECT COUNT(*) AS n FROM documents_fts WHERE documents_fts MATCH 'revenue'")[0]["n"] > 0
        episode.close()


def test_the_verdict_reports_the_spend(world, task_set, verifier):
    task = task_set.get("revenue-fy2024-1")
    episode = task_episode(world, task, templates=verifier.templates)
    run_actions(episode, task.gold)
    verdict = verifier.grade(episode, task, oracle_answer(task))
    assert verdict.passed
    search, opens = (sum(1 for a in task.gold if a.tool == tool) for tool in ("search", "open"))
    docs = len({a.args["doc_id"] for a in task.gold if a.tool == "open"})
    spent = 2 * search + opens + 4 * docs
    assert verdict.spend == {"budget": 400, "spent": spent, "left": 400 - spent, "calls": search + opens}
    assert verdict.summary().spend == verdict.spend
    assert json.loads(verdict.model_dump_json())["spend"]["spent"] == spent


def test_a_world_without_prices_has_no_spend_in_its_verdict():
    retail = load_world("retail")
    retail_tasks = load_tasks("retail")
    task = retail_tasks.get("gift-card-balance")
    checker = Verifier(retail, retail_tasks)
    episode = task_episode(retail, task, templates=checker.templates)
    run_actions(episode, task.gold)
    verdict = checker.grade(episode, task, oracle_answer(task))
    assert verdict.passed and verdict.spend == {} and "spend" not in verdict.model_dump()


def test_the_cost_check_grades_calls_and_spend(world, task_set, verifier):
    task = task_set.get("revenue-change-1")
    assert any(isinstance(c, Cost) and c.max_calls == 40 for c in task.rubric)
    episode = task_episode(world, task, templates=verifier.templates)
    run_actions(episode, task.gold)
    for _ in range(41 - len(task.gold)):  # read the same page again and again: 41 calls in all
        episode.call("get_budget", {})
    verdict = verifier.grade(episode, task, oracle_answer(task))
    failed = [c for c in verdict.checks if not c.passed]
    assert [c.type for c in failed] == ["cost"] and failed[0].reason == "41 calls, more than 40"

    tight = task.model_copy(update={"rubric": [Cost(type="cost", requirement="Spend at most ten credits.",
                                                    noop_passes=True, max_spend=10)]})  # fmt: skip
    episode = task_episode(world, task, templates=verifier.templates)
    run_actions(episode, task.gold)
    verdict = verifier.grade(episode, tight, oracle_answer(task))
    assert (
        not verdict.passed
        and verdict.checks[0].reason.startswith("spent ")
        and "more than 10" in verdict.checks[0].reason
    )


def test_citations_are_required(world, task_set, verifier):
    """The right figure, with every search of the gold solution but no document opened, fails
    the citation check and only it."""
    task = task_set.get("acquirer-revenue-1")
    episode = task_episode(world, task, templates=verifier.templates)
    run_actions(episode, [a for a in task.gold if a.tool != "open"])
    verdict = verifier.grade(episode, task, oracle_answer(task))
    failed = [c for c in verdict.checks if not c.passed]
    assert len(failed) == 1 and "never opened" in failed[0].reason


def test_an_agent_answering_from_the_first_search_result_fails_every_task(world, task_set, verifier):
    """It searches with the question, reads the first result's snippet and answers with it."""
    passed = []
    for task in task_set.tasks:
        episode = task_episode(world, task, templates=verifier.templates)
        result = episode.call("search", {"query": task.instruction[:200]})
        hit = result.value.results[0]
        answer = f"According to {hit.title}: {hit.snippet}"
        if verifier.grade(episode, task, answer).passed:
            passed.append(task.id)
    assert passed == []


def test_the_task_files_are_what_the_generator_writes(tmp_path, world):
    assert generate([str(tmp_path)]) == 0
    folder = world.source_files()
    written = {p.name: p.read_text() for p in tmp_path.iterdir()}
    kept = {
        name.split("/")[-1]: path.read_text()
        for name, path in folder
        if name.startswith("tasks/") and name.endswith(".yaml")
    }
    assert written == kept and len(written) == 4
    counts = {name: hashlib.sha256(text.encode()).hexdigest()[:8] for name, text in written.items()}
    assert set(counts) == {"easy.yaml", "medium.yaml", "hard.yaml", "long.yaml"}


def test_seventy_eight_tasks_over_three_tiers(task_set):
    by_tier = {d: sum(1 for t in task_set.tasks if t.difficulty == d) for d in ("easy", "medium", "hard")}
    assert by_tier == {"easy": 24, "medium": 18, "hard": 36}
    assert all(t.alternatives and t.near_misses for t in task_set.tasks)


def test_the_long_tasks_take_ten_to_forty_calls_with_slack_under_their_call_limit(task_set):
    long = [t for t in task_set.tasks if "long" in t.tags]
    assert len(long) == 18 and all(t.difficulty == "hard" for t in long)
    assert {t.id.rsplit("-", 1)[0] for t in long} == {"sector-leader", "ceo-alumni-revenue", "note-sector-band"}
    for task in long:
        limits = [c.max_calls for c in task.rubric if isinstance(c, Cost) and c.max_calls is not None]
        assert 10 <= len(task.gold) <= 40 and limits == [-(-2 * len(task.gold) // 10) * 10], task.id
        assert all(len(s.steps) <= limits[0] for s in task.alternatives if s.steps is not None), task.id


def test_a_long_answer_computed_from_a_preliminary_figure_fails(world, task_set, verifier):
    """After every gold step, the leader's margin computed with the preliminary figure fails the
    answer's facts (and only them); the audited margin passes."""
    task = task_set.get("sector-leader-1")
    miss = next(s for s in task.near_misses if "preliminary" in s.name)
    episode = task_episode(world, task, templates=verifier.templates)
    run_actions(episode, task.gold)
    assert verifier.grade(episode, task, oracle_answer(task)).passed
    verdict = verifier.grade(episode, task, miss.answer)
    assert [c.type for c in verdict.checks if not c.passed] == ["answer_facts"]
