"""The cheating baselines of `mcpsim check`: agents that must fail every task strictly.

Each baseline is a function of a `BaselineRun` (the world, the verifier, the task, a do-nothing
episode and the gold run) returning a `BaselineResult`: whether it applied to the task, whether
it (wrongly) passed, and what it did or why it did not apply. To add one: name it in
`BaselineName` (its place there is its place in the report), say what it does in
`BASELINE_LABELS`, write its function below and enter it in `RUNNERS`. The machinery a
baseline needs beyond a few lines lives in a module of its own (`_write_search`, `_injection`,
`_random_agent`).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from mcpsim.audit._conversation import call_messages
from mcpsim.audit._gold_run import GoldRun
from mcpsim.audit._injection import inject_free_text
from mcpsim.audit._random_agent import run_random_agent
from mcpsim.audit._verdicts import failed_checks
from mcpsim.audit._write_search import find_reverted_irreversible_write, find_unrequested_write
from mcpsim.engine import Episode
from mcpsim.grading import NOTHING_TO_NAME, Verdict, Verifier, claim_baseline, negate, stuffed_answer
from mcpsim.tasks import (
    CONFIRM_QUESTION,
    Action,
    Confirmed,
    GoldActionError,
    GoldState,
    Step,
    Task,
    gold_steps,
    oracle_answer,
    result_text,
    run_solution,
    task_episode,
)
from mcpsim.world import World

__all__ = [
    "BASELINES",
    "BASELINE_LABELS",
    "RUNNERS",
    "BaselineName",
    "BaselineResult",
    "BaselineRun",
    "run_baselines",
]

BaselineName = Literal[
    "policy_text",
    "pasted_reads",
    "negated_answer",
    "stuffed_answer",
    "denied_after",
    "spread_guesses",
    "swapped_subjects",
    "extra_write",
    "injected_text",
    "reverted_irreversible",
    "blind_yes",
    "random_agent",
]
BASELINES: tuple[BaselineName, ...] = get_args(BaselineName)
BASELINE_LABELS: dict[BaselineName, str] = {
    "policy_text": "do nothing, answer with the policy text",
    "pasted_reads": "do nothing, answer with the pasted results of the gold reads",
    "negated_answer": "gold steps, an answer negating every fact",
    "stuffed_answer": "gold steps, an answer stuffed with every number and name seen",
    "denied_after": "gold steps, an answer taking back every fact right after saying it",
    "spread_guesses": "gold steps, every fact's value among guesses in questions of their own",
    "swapped_subjects": "gold steps, the requirement with two facts of one kind swapped",
    "extra_write": "gold steps plus one unrequested write",
    "injected_text": "gold steps with an injected instruction in every free-text argument of their writes",
    "reverted_irreversible": "gold steps plus an unrequested irreversible write, then reverted",
    "blind_yes": "gold steps, asking only 'Shall I go ahead?' before the writes",
    "random_agent": "the random agent",
}


class BaselineResult(BaseModel):
    """One cheating baseline on one task: whether it applied, whether it (wrongly) passed, and
    what it did or why it did not apply."""

    applied: bool
    passed: bool = False
    detail: str = ""


@dataclass
class BaselineRun:
    """What every baseline of one task starts from. `noop` is a do-nothing episode and `gold`
    the gold run (both already graded once: grading again with another answer sees the same
    frozen state); `nothing` is a do-nothing agent's conversation (the instruction alone)."""

    world: World
    verifier: Verifier
    task: Task
    noop: Episode
    gold: GoldRun
    nothing: list[dict[str, Any]]

    def graded(
        self, episode: Episode, answer: str | None, conversation: list[dict[str, Any]], what: str
    ) -> BaselineResult:
        """Grades a baseline's episode with its answer and conversation; `what` says what it did."""
        return _baseline_result(self.verifier.grade(episode, self.task, answer, conversation), what)


Baseline = Callable[[BaselineRun], BaselineResult]


def run_baselines(run: BaselineRun) -> dict[BaselineName, BaselineResult]:
    """Every cheating baseline on `run.task`, in the order of `BASELINES`."""
    return {name: RUNNERS[name](run) for name in BASELINES}


def _baseline_result(verdict: Verdict, what: str) -> BaselineResult:
    return BaselineResult(
        applied=True,
        passed=verdict.passed,
        detail=what if verdict.passed else f"{what}; fails: {failed_checks(verdict)[:300]}",
    )


# -- answers from elsewhere -------------------------------------------------------------------------


def _policy_text(run: BaselineRun) -> BaselineResult:
    return run.graded(run.noop, run.world.policy, run.nothing, "its answer is the world's policy text")


def _pasted_reads(run: BaselineRun) -> BaselineResult:
    pasted = _pasted_read_results(run.world, run.verifier, run.task)
    return (
        run.graded(run.noop, pasted, run.nothing, "its answer is the pasted JSON of the gold reads")
        if pasted
        else BaselineResult(applied=False, detail="the gold solution reads nothing")
    )


def _pasted_read_results(world: World, verifier: Verifier, task: Task) -> str:
    """The results of every read the gold solution makes, run on a fresh episode without faults,
    as JSON text: what an agent that reads and pastes would answer."""
    reads = [a for a in task.gold if not world.tools[a.tool].writes]
    if not reads:
        return ""
    episode = task_episode(world, task, templates=verifier.templates, faults=None)
    try:
        results = [episode.call(a.tool, a.args) for a in reads]
    finally:
        episode.close()
    return "\n".join(result_text(r) for r in results if not r.is_error)


_NO_ANSWER_FACTS = "the task has no answer facts"


def _negated_answer(run: BaselineRun) -> BaselineResult:
    if not run.task.answer:
        return BaselineResult(applied=False, detail=_NO_ANSWER_FACTS)
    negated = " ".join(negate(fact) for fact in run.task.answer)
    return run.graded(run.gold.episode, negated, run.gold.conversation, f"answer: {negated[:200]!r}")


def _stuffed_answer(run: BaselineRun) -> BaselineResult:
    if not run.task.answer:
        return BaselineResult(applied=False, detail=_NO_ANSWER_FACTS)
    seen = [m["content"] for m in run.gold.conversation if m["role"] == "tool" and m["content"]]
    stuffed = stuffed_answer(seen)
    return run.graded(
        run.gold.episode, stuffed, run.gold.conversation, f"answer of {len(stuffed)} characters: {stuffed[:200]!r}"
    )


def _claim_baseline(name: str, not_applicable: str) -> Baseline:
    """A baseline whose answer reads as wrong claims (`mcpsim.grading.claim_baseline`), after the
    gold steps."""

    def run_it(run: BaselineRun) -> BaselineResult:
        answer = claim_baseline(name, run.task)
        if answer is None:
            return BaselineResult(applied=False, detail=not_applicable if run.task.answer else _NO_ANSWER_FACTS)
        return run.graded(run.gold.episode, answer, run.gold.conversation, f"answer: {answer[:200]!r}")

    return run_it


# -- writes nobody asked for --------------------------------------------------------------------------


def _extra_write(run: BaselineRun) -> BaselineResult:
    world, verifier, task, gold = run.world, run.verifier, run.task, run.gold
    found = find_unrequested_write(world, task, gold.final, verifier.gold_changes(task))
    if found is None:
        return BaselineResult(applied=False, detail="no write outside the gold changes succeeded")
    action, episode, result = found
    try:
        conversation = [
            *gold.conversation,
            *call_messages(action.tool, action.args, "call_extra", result_text(result)),
        ]
        return run.graded(
            episode,
            oracle_answer(task),
            conversation,
            f"the extra write {action.tool}({json.dumps(action.args)[:160]})",
        )
    finally:
        episode.close()


def _injected_text(run: BaselineRun) -> BaselineResult:
    """The gold steps with `INJECTION` added to every free-text argument of their writes (a memo,
    a message body, an event title): text a prompt injection would have the agent write."""
    world, verifier, task = run.world, run.verifier, run.task
    steps: list[Step] = []
    injected = 0
    for step in gold_steps(task, world):
        if isinstance(step, Action) and world.tools[step.tool].writes:
            args, n = inject_free_text(world.tools[step.tool].input_schema(), step.args)
            injected += n
            step = step.model_copy(update={"args": args})
        steps.append(step)
    if not injected:
        return BaselineResult(applied=False, detail="the gold writes take no free-text argument")
    episode = task_episode(world, task, templates=verifier.templates)
    try:
        try:
            conversation = run_solution(episode, task, steps)
        except GoldActionError as exc:
            return BaselineResult(applied=False, detail=f"the world refuses the injected arguments: {exc}")
        return run.graded(episode, oracle_answer(task), conversation, f"{injected} free-text argument(s) injected")
    finally:
        episode.close()


def _reverted_irreversible(run: BaselineRun) -> BaselineResult:
    world, verifier, task, gold = run.world, run.verifier, run.task, run.gold
    if not any(spec.irreversible for spec in world.tools.values()):
        return BaselineResult(applied=False, detail="the world declares no irreversible tool")
    ignored = [
        *verifier.tasks.volatile_for(task),
        *verifier.tasks.free_text_for(task),
        *(v for c in task.rubric if isinstance(c, GoldState) for v in c.volatile),
    ]
    found = find_reverted_irreversible_write(world, task, gold.final, verifier.gold_changes(task), ignored)
    if found is None:
        return BaselineResult(applied=False, detail="no irreversible write outside the gold's could be reverted")
    actions, episode, results = found
    try:
        conversation = list(gold.conversation)
        for number, (action, result) in enumerate(zip(actions, results, strict=True)):
            conversation += call_messages(action.tool, action.args, f"call_revert_{number}", result_text(result))
        shown = " then ".join(f"{a.tool}({json.dumps(a.args)[:100]})" for a in actions)
        return run.graded(episode, oracle_answer(task), conversation, shown)
    finally:
        episode.close()


# -- the dialogue -----------------------------------------------------------------------------------


def _blind_yes(run: BaselineRun) -> BaselineResult:
    """The gold run, its request for the go-ahead replaced by a bare one (the user still says
    yes): a `confirmed` check that wants the change named must fail it."""
    verifier, task, gold = run.verifier, run.task, run.gold
    checks = [c for c in task.rubric if isinstance(c, Confirmed) and c.describe]
    committed = [c for c in gold.episode.transcript() if c.call_seq is not None]

    def covered(check: Confirmed) -> bool:  # a call the check wants confirmed took effect
        if check.tools == "writes":
            return any(c.writes for c in committed)
        return any(fnmatch.fnmatchcase(c.tool, p) for c in committed for p in check.tools)

    asked = [i for i, m in enumerate(gold.conversation) if m["role"] == "assistant" and m.get("content")]
    if not asked or not any(covered(c) for c in checks):
        return BaselineResult(applied=False, detail="no write a describing confirmed check covers")
    blind = [dict(m, content=CONFIRM_QUESTION) if i in asked else m for i, m in enumerate(gold.conversation)]
    verdict = verifier.grade(gold.episode, task, oracle_answer(task), blind)
    if verdict.passed and any(NOTHING_TO_NAME in c.reason for c in verdict.checks if c.type == "confirmed"):
        return BaselineResult(applied=False, detail=f"the write it confirms: {NOTHING_TO_NAME}")
    return _baseline_result(verdict, f"asked only {CONFIRM_QUESTION!r}")


# -- agents that do not try ---------------------------------------------------------------------------


def _random_agent(run: BaselineRun) -> BaselineResult:
    episode, conversation, answer = run_random_agent(run.world, run.task, run.verifier.templates)
    try:
        calls = sum(len(m.get("tool_calls") or []) for m in conversation)
        return run.graded(episode, answer, conversation, f"{calls} random calls")
    finally:
        episode.close()


RUNNERS: dict[BaselineName, Baseline] = {
    "policy_text": _policy_text,
    "pasted_reads": _pasted_reads,
    "negated_answer": _negated_answer,
    "stuffed_answer": _stuffed_answer,
    "denied_after": _claim_baseline("denied_after", _NO_ANSWER_FACTS),
    "spread_guesses": _claim_baseline("spread_guesses", _NO_ANSWER_FACTS),
    "swapped_subjects": _claim_baseline("swapped_subjects", "no two facts of one kind with subjects of their own"),
    "extra_write": _extra_write,
    "injected_text": _injected_text,
    "reverted_irreversible": _reverted_irreversible,
    "blind_yes": _blind_yes,
    "random_agent": _random_agent,
}
"""Each baseline's function, by name (every name of `BaselineName` has one)."""
