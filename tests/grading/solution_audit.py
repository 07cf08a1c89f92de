"""A held-out audit of whole solutions through the public interfaces: each solution is played by
an agent of the runner (`mcpsim.runner`) over MCP on an in-process episode, its requests for the
go-ahead answered by the task's scripted user, and graded as the runner grades (final message and
full conversation). Correct solutions (the gold, the task's alternatives, and variants written
here: reads reordered, an extra harmless read, the final message in other words, the request for
the go-ahead in other words, one request per write) must pass; wrong or cheap ones (a denial
after the value, guesses across sentences, swapped subjects, a report contradicting the outcome,
a request for another action, one request for several writes, a repeated effect, a zero-call
guess, a wrong write, a missing write) must fail.

The phrasings here are written for this audit, not taken from the grader's own baselines (except
`swapped_subjects`, which needs the task's subjects). It runs on the four hand-built worlds and on
a sample of catalogue worlds:

    python -m tests.grading.solution_audit [WORLD ...] [--catalog N] [--seed 8123] [--tasks K] [--show N]

and prints, per world and in all, the share of correct work refused and of wrong work passed
(`tests/grading/test_solution_audit.py` holds a fixed sample to the issue's targets: at most 3%
and 2%).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import us

from mcpsim import logs
from mcpsim.engine import FaultProfile, TemplateCache, load_profile
from mcpsim.grading import claim_baseline
from mcpsim.runner import InProcessBackend
from mcpsim.runner._run import Job, run_episode
from mcpsim.runner._settings import RolloutSettings, RunConfig
from mcpsim.runner._users import ScriptedUser
from mcpsim.serve import EpisodeManager
from mcpsim.tasks import (
    Action,
    CallOrder,
    Confirmed,
    Fact,
    PhraseFact,
    Say,
    Step,
    Task,
    TaskSet,
    ToolNotCalled,
    confirmation_question,
    gold_steps,
    load_tasks,
    state_fact,
)
from mcpsim.tasks._action_words import tool_actions
from mcpsim.tasks._scenario import _needs_confirmation
from mcpsim.trajectories import FunctionCall, Message, ToolCall
from mcpsim.world import World, load_world
from tests.grading.claims_redteam import TYPED, render

HAND_BUILT = ("retail", "airline", "bank", "workspace")
CATALOG_SEED = 8123
REFUSED_AT_MOST, PASSED_AT_MOST = 0.03, 0.02


@dataclass(frozen=True)
class Attempt:
    """One whole solution of a task: its steps (tool calls and requests for the go-ahead), its
    final message, whether it is correct, and its class."""

    world: str
    task: str
    correct: bool
    cls: str
    steps: tuple[Step, ...]
    answer: str
    faults: FaultProfile | None = None
    repeats: Action | None = None  # the call a repeated effect makes twice (applies only if both took effect)


@dataclass
class Outcome:
    attempt: Attempt
    passed: bool
    why: str = ""
    applied: bool = True  # False: the world refused the cheat (a repeat that did not take effect)


# -- the agent: plays the steps over MCP, then says the final message -------------------------------


@dataclass
class PlayedAgent:
    """Plays an attempt's steps one assistant message each (a tool call, or a request for the
    go-ahead that the scripted user answers), then its final message (again, if the user says
    more). It carries on after a no: a cheat does."""

    attempt: Attempt
    name: str = "played"
    needs_task: bool = False
    _next: int = field(default=0, init=False)

    async def respond(self, turn: Any) -> Message:
        steps = self.attempt.steps
        if self._next >= len(steps):
            return Message(role="assistant", content=self.attempt.answer)
        step = steps[self._next]
        self._next += 1
        if isinstance(step, Say):
            return Message(role="assistant", content=step.say)
        call = ToolCall(id=f"call_{self._next}", function=FunctionCall(name=step.tool, arguments=json.dumps(step.args)))
        return Message(role="assistant", tool_calls=[call])

    async def aclose(self) -> None:
        pass


# -- words for actions and values -----------------------------------------------------------------------

_PAST = {"pay": "paid", "send": "sent", "make": "made", "set": "set", "check": "checked", "give": "given"}
_US_STATES = {s.name.lower(): s.abbr for s in us.states.STATES_AND_TERRITORIES}
_STREET = {"Street": "St.", "Avenue": "Ave", "Road": "Rd", "Boulevard": "Blvd", "Drive": "Dr.", "Lane": "Ln"}


def _verb_and_record(tool: str) -> tuple[str, str]:
    """`cancel_pending_order` -> ("cancel", "pending order")."""
    words = tool.split("_")
    return words[0], " ".join(words[1:])


def _past(verb: str) -> str:
    if verb in _PAST:
        return _PAST[verb]
    if verb.endswith("e"):
        return verb + "d"
    if verb.endswith("y") and verb[-2:-1] not in "aeiou":
        return verb[:-1] + "ied"
    if re.fullmatch(r"[a-z]*[^aeiou][aeiou][bdgmnpt]", verb) and verb not in {"open", "listen", "visit"}:
        return verb + verb[-1] + "ed"
    return verb + "ed"


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CLOCK = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")


def _natural(value: Any) -> str:
    """A value as a person writes it: dates and times spelled out, US states by their code, street
    words abbreviated, nested values as lists."""
    if isinstance(value, dict):
        return ", ".join(_natural(v) for v in value.values() if v not in (None, ""))
    if isinstance(value, list | tuple):
        return ", ".join(_natural(v) for v in value)
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = str(value)
    if _ISO_DATE.match(text):
        day = date.fromisoformat(text)
        return f"{day:%b} {day.day}, {day.year}"
    if m := _CLOCK.match(text):
        hour, minute = int(m.group(1)), int(m.group(2))
        return f"{hour % 12 or 12}:{minute:02d} {'AM' if hour < 12 else 'PM'}"
    if text.lower() in _US_STATES:
        return _US_STATES[text.lower()]
    for word, short in _STREET.items():
        text = re.sub(rf"\b{word}\b", short, text)
    return text


def _values(action: Action) -> str:
    return "; ".join(f"{k.replace('_', ' ')}: {_natural(v)}" for k, v in action.args.items() if v not in (None, ""))


def ask_prose(actions: Sequence[Action]) -> str:
    parts = []
    for a in actions:
        verb, record = _verb_and_record(a.tool)
        parts.append(f"{verb} the {record} ({_values(a)})" if record else f"{verb} ({_values(a)})")
    return (
        f"Before I make any change, just to double-check: I'm about to {' and then '.join(parts)}. Is that OK with you?"
    )


def ask_list(actions: Sequence[Action]) -> str:
    lines = ["Here is the change I'd like to make on your behalf:"]
    for a in actions:
        verb, record = _verb_and_record(a.tool)
        lines.append(f"- {verb.capitalize()} {record}".rstrip())
        lines += [f"  - {k.replace('_', ' ')}: {_natural(v)}" for k, v in a.args.items() if v not in (None, "")]
    lines.append("Would you like me to proceed?")
    return "\n".join(lines)


def ask_other_action(action: Action, form: int) -> str:
    """A request naming the action's record and values with another action."""
    verb, record = _verb_and_record(action.tool)
    other = "update" if "cancel" in tool_actions(action.tool) else "cancel"
    if form % 2:
        return f"I'd rather not {verb} anything; I'll simply {other} the {record} ({_values(action)}). Can I do that?"
    return f"Would you like me to {other} the {record} ({_values(action)}) for you?"


# -- which steps are which ------------------------------------------------------------------------------


def _writes(world: World, task: Task) -> list[Action]:
    return [a for a in task.gold if a.expect == "ok" and a.tool in world.tools and world.tools[a.tool].writes]


def _confirm_checks(task: Task) -> list[Confirmed]:
    return [c for c in task.rubric if isinstance(c, Confirmed)]


def _needs_asking(world: World, task: Task, action: Action) -> bool:
    return any(_needs_confirmation(world, action, c) for c in _confirm_checks(task))


def _with_requests(
    world: World, task: Task, actions: Sequence[Action], ask: Callable[[list[Action]], str]
) -> list[Step]:
    """The actions, with one request (`ask`) before each write a `confirmed` check wants asked about."""
    steps: list[Step] = []
    for action in actions:
        if _needs_asking(world, task, action):
            steps.append(Say(say=ask([action])))
        steps.append(action)
    return steps


def _one_request(world: World, task: Task, actions: Sequence[Action], ask: Callable[[list[Action]], str]) -> list[Step]:
    """The actions, with one request naming every write a check wants asked about, before the first."""
    needed = [i for i, a in enumerate(actions) if _needs_asking(world, task, a)]
    steps: list[Step] = list(actions)
    if needed:
        steps.insert(needed[0], Say(say=ask([actions[i] for i in needed])))
    return steps


# -- final messages ----------------------------------------------------------------------------------------


def _said_facts(task: Task, form: int) -> list[str]:
    return [render(f, form) if isinstance(f, TYPED) else state_fact(f) for f in task.answer]


def _done_claim(world: World, task: Task) -> str:
    """A true report of the writes the gold solution makes, in words."""
    claims = []
    for action in _writes(world, task):
        verb, record = _verb_and_record(action.tool)
        if not tool_actions(action.tool):
            continue
        claim = f"{_past(verb)} the {record}" if record else _past(verb)
        if claim not in claims:
            claims.append(claim)
    return f"I've {' and '.join(claims)} as you asked." if claims else "Your request has been taken care of."


def correct_answers(world: World, task: Task) -> list[tuple[str, str]]:
    """The final message in words of this audit (two forms)."""
    report = _done_claim(world, task) if _writes(world, task) else ""
    if not task.answer:
        if not report:
            return []
        return [("report in words", f"All set! {report} Is there anything else I can help you with?")]
    first = ", ".join(_said_facts(task, 1))
    listed = "\n".join(f"- {s}" for s in _said_facts(task, 2))
    return [
        ("answer in words", f"Thanks for waiting. {report} Here's what I found: {first}.".replace("  ", " ")),
        ("answer as a list", f"{report}\nHere are the details:\n{listed}\nLet me know if you need anything else."),
    ]


_DENIALS = (
    "{v}, though that figure turned out to be wrong",
    "{v}. Sorry, scratch that, it's not accurate",
    "{v} (which is incorrect)",
)
_GUESSES = ("{d}. {v}. {e}", "Is it {d}? It's {v}. Or {e}?", "{v}. Hmm, {d}. Possibly {e}")


def _typed(task: Task) -> Fact | None:
    return next((f for f in task.answer if isinstance(f, TYPED)), None)


def wrong_answers(task: Task, n: int) -> list[tuple[str, str]]:
    """Final messages that state no fact properly: a denial after a value, guesses across
    sentences, subjects swapped between two facts of one kind."""
    if not task.answer:
        return []
    found = []
    fact = _typed(task)
    rest = [state_fact(f) for f in task.answer if f is not fact]
    if fact is not None:
        v, d, e = render(fact, n), render(fact, n, 1), render(fact, n, -1)
        denied = _DENIALS[n % 3].format(v=v)
        found.append(("denial after the value", ". ".join([denied, *rest]) + "."))
        found.append(("guesses across sentences", ". ".join([_GUESSES[n % 3].format(v=v, d=d, e=e), *rest]) + "."))
    else:
        phrase = next((f for f in task.answer if isinstance(f, PhraseFact)), None)
        if phrase is not None:
            others = [state_fact(f) for f in task.answer if f is not phrase]
            found.append(
                ("denial after the value", ". ".join([f"{state_fact(phrase)}; no, that's wrong", *others]) + ".")
            )
    swapped = claim_baseline("swapped_subjects", task)
    if swapped is not None:
        found.append(("swapped subjects", swapped))
    return found


_FAILED = (
    "Unfortunately the system returned an error, so I wasn't able to make the change and your records are as they "
    "were.",
    "I'm sorry, but the update didn't go through, so nothing has been modified.",
    "Sadly I could not complete your request; your account remains unchanged.",
)
_DONE = ("Good news: I've {past} the {record} for you.", "All done: I went ahead and {past} the {record}.")
_CLASS_PAST = {
    *(("cancel", "cancelled"), ("change", "updated"), ("create", "created"), ("book", "booked")),
    *(("delete", "deleted"), ("send", "sent"), ("pay", "paid"), ("issue", "issued"), ("accept", "accepted")),
    *(("decline", "declined"), ("assign", "assigned"), ("close", "closed"), ("reopen", "reopened")),
    *(("freeze", "frozen"), ("unfreeze", "unlocked"), ("ship", "shipped"), ("dispute", "disputed")),
    *(("tag", "tagged"), ("exchange", "exchanged"), ("return", "returned"), ("refund", "refunded")),
}


def false_report(world: World, task: Task, n: int) -> str:
    """A report contradicting the outcome: a failure after writes that took effect, a change made
    after none (the refused action's, in a word of its action, where the task names one)."""
    if any(tool_actions(a.tool) for a in _writes(world, task)):
        return _FAILED[n % len(_FAILED)]
    refused = [
        t for c in task.rubric if isinstance(c, ToolNotCalled) for t in c.tools if "*" not in t and tool_actions(t)
    ]
    if not refused:
        return _DONE[n % len(_DONE)].format(past="updated", record="account")
    action = sorted(tool_actions(refused[0]))[0]
    record = " ".join(w for w in refused[0].split("_") if not tool_actions(w)) or "request"
    return _DONE[n % len(_DONE)].format(past=dict(_CLASS_PAST)[action], record=record)


# -- the attempts of one task ---------------------------------------------------------------------------


def _reads_before_writes(world: World, task: Task) -> list[int]:
    """The gold reads before its first write that may move: not a call the task's `call_order`
    wants first (an identity check)."""
    firsts = [p for c in task.rubric if isinstance(c, CallOrder) for p in c.first]
    first_write = next((i for i, a in enumerate(task.gold) if world.tools[a.tool].writes), len(task.gold))
    return [
        i
        for i in range(first_write)
        if task.gold[i].expect == "ok" and not any(fnmatch.fnmatchcase(task.gold[i].tool, p) for p in firsts)
    ]


_DATETIME = re.compile(r"^(\d{4}-\d{2}-\d{2})(.*)$")


def _other(value: Any) -> Any:
    """Another value of the same kind for a structured argument (a date a day later, another
    email, an id with another last digit), or None for free text."""
    if isinstance(value, list) and value:
        first = _other(value[0])
        return None if first is None else [first, *value[1:]]
    if not isinstance(value, str):
        return None
    if m := _DATETIME.match(value):
        day = date.fromordinal(date.fromisoformat(m.group(1)).toordinal() + 1)
        return day.isoformat() + m.group(2)
    if re.fullmatch(r"[\w.+-]+@[\w.-]+", value):
        return "x" + value
    if " " not in value and re.search(r"\d$", value):
        return value[:-1] + str((int(value[-1]) + 1) % 10)
    return None


def _changed(world: World, action: Action) -> Action | None:
    """The action with one argument set to another value: an enum's other choice, a flag
    flipped, a number plus one, a structured value (a date, an email, an id) changed; free text
    (a title, a memo) only when nothing else can change, since its words are graded by a rule."""
    properties = world.tools[action.tool].input_schema().get("properties", {})
    candidates: list[tuple[int, str, Any]] = []
    for name, value in action.args.items():
        schema = properties.get(name, {})
        choices = schema.get("enum") or next((s.get("enum") for s in schema.get("anyOf", []) if s.get("enum")), None)
        others = [c for c in choices or [] if c != value]
        if others:
            candidates.append((0, name, others[0]))
        elif isinstance(value, bool):
            candidates.append((0, name, not value))
        elif isinstance(value, int | float):
            candidates.append((1, name, value + 1))
        elif (other := _other(value)) is not None:
            candidates.append((2 + ("id" in name), name, other))
        elif isinstance(value, str) and value:
            candidates.append((9, name, value + " and more"))
    if not candidates:
        return None
    _, name, value = min(candidates, key=lambda c: c[0])
    return action.model_copy(update={"args": {**action.args, name: value}})


def attempts(world_name: str, world: World, task: Task, n: int) -> Iterator[Attempt]:
    """Every correct and wrong solution of `task` this audit tries (`n` varies the forms)."""
    gold = list(task.gold)
    oracle = task.oracle_answer()
    faulty = task.faults is not None
    asks = bool(_confirm_checks(task)) and any(_needs_asking(world, task, a) for a in _writes(world, task))

    def make(
        correct: bool, cls: str, steps: Sequence[Step], answer: str = oracle, faults: Any = None, repeats: Any = None
    ) -> Attempt:
        return Attempt(world_name, task.id, correct, cls, tuple(steps), answer, faults, repeats)

    base = gold_steps(task, world)
    yield make(True, "gold", base)
    for alt in task.alternatives:
        steps = alt.steps if alt.steps is not None else base
        faults = load_profile(alt.faults) if alt.faults is not None else None
        yield make(True, "alternative", steps, alt.answer if alt.answer is not None else oracle, faults)
    reads = _reads_before_writes(world, task)
    if not faulty and len({gold[i].tool for i in reads}) >= 2:
        moved = dict(zip(reads, reversed(reads), strict=True))
        order = [moved.get(i, i) for i in range(len(gold))]
        yield make(True, "reads reordered", _one_request(world, task, [gold[i] for i in order], _oracle_ask))
    any_read = [
        i for i, a in enumerate(base) if isinstance(a, Action) and a.expect == "ok" and not world.tools[a.tool].writes
    ]
    if not faulty and any_read:
        k = any_read[-1]
        yield make(True, "extra harmless read", [*base[: k + 1], base[k], *base[k + 1 :]])
    for cls, answer in correct_answers(world, task):
        yield make(True, cls, base, answer)
    if asks:
        yield make(True, "request in prose", _one_request(world, task, gold, ask_prose))
        yield make(True, "request as a list", _one_request(world, task, gold, ask_list))
        yield make(True, "one request per write", _with_requests(world, task, gold, [ask_prose, ask_list][n % 2]))
    # -- wrong or cheap
    for cls, answer in wrong_answers(task, n):
        yield make(False, cls, base, answer)
    yield make(False, "report contradicting the outcome", base, f"{oracle} {false_report(world, task, n)}")
    firsts = [p for c in task.rubric if isinstance(c, CallOrder) for p in c.first]
    writes = [  # an identity check is bookkeeping, not the change asked for
        a
        for a in _writes(world, task)
        if tool_actions(a.tool) and not any(fnmatch.fnmatchcase(a.tool, p) for p in firsts)
    ]
    if asks:
        other: Callable[[list[Action]], str] = lambda actions: ask_other_action(actions[0], n)  # noqa: E731
        yield make(False, "request for another action", _with_requests(world, task, gold, other))
        needed = [a for a in writes if _needs_asking(world, task, a)]
        first = tool_actions(needed[0].tool) if needed else set()
        if len(needed) >= 2 and not all(w.tool != needed[0].tool and tool_actions(w.tool) & first for w in needed[1:]):
            steps: list[Step] = list(gold)
            steps.insert(gold.index(needed[0]), Say(say=ask_prose(needed[:1])))
            yield make(False, "one request for several writes", steps)
    irreversible = [i for i, a in enumerate(gold) if a in writes and world.tools[a.tool].irreversible]
    if irreversible and not faulty:
        i = irreversible[0]
        again = gold[: i + 1] + [gold[i]] + gold[i + 1 :]
        yield make(False, "repeated effect", _with_requests(world, task, again, ask_prose), repeats=gold[i])
    if any(a.expect == "ok" for a in gold):
        yield make(False, "zero-call guess", [])
    if writes and not faulty:
        last = max(i for i, a in enumerate(gold) if a in writes)
        changed = _changed(world, gold[last])
        if changed is not None:
            yield make(
                False, "wrong write", _with_requests(world, task, [*gold[:last], changed, *gold[last + 1 :]], ask_prose)
            )
        yield make(False, "missing write", _with_requests(world, task, gold[:last] + gold[last + 1 :], ask_prose))


def _oracle_ask(actions: list[Action]) -> str:
    return confirmation_question(actions)


# -- running ------------------------------------------------------------------------------------------------


@dataclass
class Worlds:
    """The worlds and task sets the audit runs on (hand-built by name, generated by object)."""

    worlds: dict[str, World] = field(default_factory=dict)
    tasks: dict[str, TaskSet] = field(default_factory=dict)

    def world(self, name: str) -> World:
        return self.worlds[name] if name in self.worlds else load_world(name)

    def task_set(self, name: str) -> TaskSet:
        return self.tasks[name] if name in self.tasks else load_tasks(name)


def catalogue_worlds(count: int, seed: int = CATALOG_SEED, tasks: int = 10) -> Worlds:
    """`count` catalogue worlds drawn with `seed`, each with `tasks` generated tasks. A drawn world
    that does not expand, compile or seed (acceptance would reject it) is skipped, named on
    stderr, and the next one drawn in its place (at most `count` more)."""
    from mcpsim.catalogue._blueprints import catalogue_specs
    from mcpsim.specs import compile_spec
    from mcpsim.taskgen import generate_tasks
    from mcpsim.taskgen._generator import task_set

    found = Worlds()
    for index, blueprint, _, spec in catalogue_specs(2 * count, seed=seed):
        if len(found.worlds) == count:
            break
        try:
            if isinstance(spec, Exception):
                raise spec
            compiled = compile_spec(spec)
            generated = task_set(compiled, generate_tasks(compiled, count=tasks, seed=0))
        except Exception as exc:  # any world acceptance would reject is skipped, and named
            print(f"skipped catalogue world {index} ({blueprint}): {exc}", file=sys.stderr)
            continue
        found.worlds[spec.name] = compiled.world
        found.tasks[spec.name] = generated
    return found


async def _play(backend: InProcessBackend, task: Task, attempt: Attempt) -> Outcome:
    config = RunConfig(world=attempt.world, tasks=[task], out=Path(tempfile.gettempdir()), faults=attempt.faults)
    settings = RolloutSettings(max_steps=len(attempt.steps) + 6, timeout=600.0)
    job = Job(task, 0, None, settings)
    trajectory, _ = await run_episode(config, job, backend, PlayedAgent(attempt), ScriptedUser(task), anyio.Event())
    verdict = trajectory.verdict or {}
    failed = [f"{c.get('type')}: {c.get('reason', '')[:160]}" for c in verdict.get("checks", []) if not c.get("passed")]
    why = "; ".join(failed) or str(verdict.get("failure") or trajectory.error or trajectory.termination)
    applied = True
    if attempt.repeats is not None:
        same = [c for c in trajectory.calls if c.ok and c.tool == attempt.repeats.tool]
        applied = sum(c.arguments == attempt.repeats.args for c in same) >= 2
    return Outcome(attempt, trajectory.reward == 1.0, why, applied)


def run_audit(
    worlds: Worlds,
    names: Sequence[str],
    per_world: int | None = None,
    only: dict[str, Sequence[str]] | None = None,
    classes: Sequence[str] | None = None,
) -> list[Outcome]:
    """Every attempt of the first `per_world` tasks (all by default; `only`: these task ids of a
    world) of each world of `names`, or only the attempts of `classes`."""
    manager = EpisodeManager(TemplateCache(), ttl_seconds=None, worlds=worlds.world, tasks=worlds.task_set)
    backend = InProcessBackend(manager)
    planned: list[tuple[Task, Attempt]] = []
    for name in names:
        world = worlds.world(name)
        tasks = worlds.task_set(name).tasks
        chosen = [t for t in tasks if t.id in only[name]] if only and name in only else tasks[:per_world]
        for task in chosen:
            n = tasks.index(task)
            planned += [(task, a) for a in attempts(name, world, task, n) if classes is None or a.cls in classes]

    async def main() -> list[Outcome]:
        return [await _play(backend, task, attempt) for task, attempt in planned]

    return anyio.run(main)


@dataclass
class Rates:
    correct: int = 0
    refused: int = 0
    wrong: int = 0
    passed: int = 0

    def add(self, outcome: Outcome) -> None:
        if outcome.attempt.correct:
            self.correct += 1
            self.refused += not outcome.passed
        else:
            self.wrong += 1
            self.passed += outcome.passed

    @property
    def refused_share(self) -> float:
        return self.refused / self.correct if self.correct else 0.0

    @property
    def passed_share(self) -> float:
        return self.passed / self.wrong if self.wrong else 0.0


def tally(outcomes: Sequence[Outcome]) -> tuple[dict[str, Rates], Rates, dict[str, Rates]]:
    """Rates per world, in all, and per class."""
    per_world: dict[str, Rates] = defaultdict(Rates)
    per_class: dict[str, Rates] = defaultdict(Rates)
    total = Rates()
    for outcome in outcomes:
        if not outcome.applied:
            continue
        per_world[outcome.attempt.world].add(outcome)
        per_class[outcome.attempt.cls].add(outcome)
        total.add(outcome)
    return dict(per_world), total, dict(per_class)


def table(outcomes: Sequence[Outcome]) -> str:
    per_world, total, per_class = tally(outcomes)
    lines = [f"{'world':<32} {'correct':>7} {'refused':>8} {'wrong':>6} {'passed':>7}"]
    for name, r in [*per_world.items(), ("ALL", total)]:
        lines.append(f"{name:<32} {r.correct:>7} {r.refused_share:>8.1%} {r.wrong:>6} {r.passed_share:>7.1%}")
    lines.append("")
    lines.append(f"{'class':<32} {'n':>7} {'wrongly':>8}")
    for cls, r in sorted(per_class.items()):
        n, bad = (r.correct, r.refused) if r.correct else (r.wrong, r.passed)
        lines.append(f"{cls:<32} {n:>7} {bad:>8}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("worlds", nargs="*", default=list(HAND_BUILT))
    parser.add_argument("--catalog", type=int, default=8, help="catalogue worlds to generate (0: none)")
    parser.add_argument("--seed", type=int, default=CATALOG_SEED)
    parser.add_argument("--tasks", type=int, default=None, help="tasks per world (default: all)")
    parser.add_argument("--show", type=int, default=0, help="print the first N misgraded attempts")
    args = parser.parse_args(argv)
    logs.configure("WARNING")
    worlds = catalogue_worlds(args.catalog, args.seed) if args.catalog else Worlds()
    names = [*args.worlds, *worlds.worlds]
    outcomes = run_audit(worlds, names, args.tasks)
    print(table(outcomes))
    bad = [o for o in outcomes if o.applied and o.passed != o.attempt.correct]
    for o in bad[: args.show]:
        a = o.attempt
        print(f"\n{'REFUSED' if a.correct else 'PASSED'} {a.world}/{a.task} [{a.cls}] answer={a.answer[:200]!r}")
        for s in a.steps:
            if isinstance(s, Say):
                print(f"   say: {s.say[:300]!r}")
        print(f"   why: {o.why[:500]}")
    _, total, _ = tally(outcomes)
    return 0 if total.refused_share <= REFUSED_AT_MOST and total.passed_share <= PASSED_AT_MOST else 1


if __name__ == "__main__":
    sys.exit(main())
