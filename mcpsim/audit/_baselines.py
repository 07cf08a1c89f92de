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
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any, Literal, get_args

from pydantic import BaseModel

from mcpsim.audit._conversation import call_messages
from mcpsim.audit._effect_baselines import repeated_effect, zero_call_guess
from mcpsim.audit._gold_run import GoldRun
from mcpsim.audit._greedy import greedy_step
from mcpsim.audit._injection import inject_free_text
from mcpsim.audit._random_agent import run_random_agent
from mcpsim.audit._report_baselines import false_report, one_request_many_writes, other_action_confirmed
from mcpsim.audit._transcriber import Played, transcribe
from mcpsim.audit._verdicts import failed_checks
from mcpsim.audit._write_search import find_reverted_irreversible_write, find_unrequested_write
from mcpsim.engine import Episode, TemplateCache
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
    "RATED",
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
    "repeated_effect",
    "zero_call_guess",
    "blind_yes",
    "other_action_confirmed",
    "one_request_many_writes",
    "false_report",
    "random_agent",
    "transcriber",
    "one_step_greedy",
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
    "repeated_effect": "gold steps with an irreversible call made twice, or undone and redone",
    "zero_call_guess": "no call, the right answer guessed",
    "blind_yes": "gold steps, asking only 'Shall I go ahead?' before the writes",
    "other_action_confirmed": "gold steps, the request naming the records but asking to keep them as they are",
    "one_request_many_writes": "gold steps, the request naming only the first of several writes",
    "false_report": "gold steps, a report contradicting the outcome (failure after a change, a change after none)",
    "random_agent": "the random agent",
    "transcriber": "matching tools, arguments copied from the instruction, no result read",
    "one_step_greedy": "one call to the best matching tool, its result echoed",
}
# Judged by their pass rate over a world's tasks (at most TRIVIAL_LIMIT), not task by task.
RATED: frozenset[BaselineName] = frozenset({"transcriber", "one_step_greedy"})


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


def run_baselines(run: BaselineRun, names: Collection[str] = BASELINES) -> dict[BaselineName, BaselineResult]:
    """The cheating baselines `names` (default: every one) on `run.task`, in the order of `BASELINES`."""
    return {name: RUNNERS[name](run) for name in BASELINES if name in names}


def _outcome(outcome: tuple[bool, bool, str]) -> BaselineResult:
    applied, passed, detail = outcome
    return BaselineResult(applied=applied, passed=passed, detail=detail)


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


def _played(agent: Callable[[World, Task, TemplateCache], Played]) -> Baseline:
    """A baseline that runs a cheating agent of its own module on a fresh episode."""

    def run_it(run: BaselineRun) -> BaselineResult:
        played = agent(run.world, run.task, run.verifier.templates)
        try:
            return run.graded(played.episode, played.answer, played.conversation, played.what)
        finally:
            played.episode.close()

    return run_it


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
    "repeated_effect": lambda run: BaselineResult(**repeated_effect(run.world, run.verifier, run.task)._asdict()),
    "zero_call_guess": lambda run: BaselineResult(**zero_call_guess(run.world, run.verifier, run.task)._asdict()),
    "blind_yes": _blind_yes,
    "other_action_confirmed": lambda run: _outcome(other_action_confirmed(run.world, run.verifier, run.task, run.gold)),
    "one_request_many_writes": lambda run: _outcome(
        one_request_many_writes(run.world, run.verifier, run.task, run.gold)
    ),
    "false_report": lambda run: _outcome(false_report(run.verifier, run.task, run.gold)),
    "random_agent": _random_agent,
    "transcriber": _played(transcribe),
    "one_step_greedy": _played(greedy_step),
}
"""Each baseline's function, by name (every name of `BaselineName` has one)."""
