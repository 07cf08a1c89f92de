"""One evaluator per rubric check type. Each returns (passed, reason); the reason says what was
found, so a failed check explains itself."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any

from mcpsim import tasks
from mcpsim.engine import CallRecord, Episode, NetChanges, row_matches, where_sql
from mcpsim.grading import _answers as answers
from mcpsim.grading._described import names_the_change, owner_ids
from mcpsim.grading._diff import (
    canonical_row,
    compare_with_gold,
    diff_entries,
    generated_ids,
    show_key,
)
from mcpsim.grading._effects import compare_irreversible
from mcpsim.grading._written import written_problems
from mcpsim.tasks import Check, FreeTextRule, Task, is_affirmative, is_confirmation_request, is_refusal, names_action
from mcpsim.world import billing

Outcome = tuple[bool, str]


@dataclass
class GradingContext:
    """What a check sees: the ended episode, its net changes (with its irreversible writes) and
    transcript, the agent's final answer, and (computed on first use) the gold solution's net
    changes. `volatile` patterns are columns the world sets; `free_text` maps the columns the agent
    fills in its own words to the rule that grades them."""

    task: Task
    episode: Episode
    answer: str | None
    transcript: list[CallRecord]
    changes: NetChanges
    volatile: list[str]
    gold_changes: Callable[[], NetChanges]
    params: dict[str, Any] = field(default_factory=dict)
    conversation: list[dict[str, Any]] | None = None  # OpenAI-style messages, when the caller has them
    free_text: dict[str, FreeTextRule] = field(default_factory=dict)

    def ignored(self, more: list[str] | None = None) -> list[str]:
        """The columns equality comparisons leave out: volatile ones and free text (graded apart)."""
        return [*self.volatile, *(more or []), *self.free_text]

    def rows(self, table: str, where: dict[str, Any]) -> list[dict[str, Any]]:
        return self.episode.select(table, where)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def row_exists(ctx: GradingContext, check: tasks.RowExists) -> Outcome:
    n = len(ctx.rows(check.table, check.where))
    return n > 0, f"{_plural(n, 'row')} of {check.table} match {check.where}"


def row_absent(ctx: GradingContext, check: tasks.RowAbsent) -> Outcome:
    n = len(ctx.rows(check.table, check.where))
    return n == 0, f"{_plural(n, 'row')} of {check.table} match {check.where}"


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-9)
    return bool(a == b)


def field_equals(ctx: GradingContext, check: tasks.FieldEquals) -> Outcome:
    rows = ctx.rows(check.table, check.where)
    if len(rows) != 1:
        return False, f"expected exactly one row of {check.table} matching {check.where}, found {len(rows)}"
    row = rows[0]
    unknown = [c for c in check.values if c not in row]
    if unknown:
        raise ValueError(f"table {check.table} has no columns {unknown}")
    wrong = [f"{c}: expected {v!r}, got {row[c]!r}" for c, v in check.values.items() if not _same(row[c], v)]
    return not wrong, "; ".join(wrong) or f"{', '.join(f'{c}={v!r}' for c, v in check.values.items())}"


def row_count(ctx: GradingContext, check: tasks.RowCount) -> Outcome:
    n = len(ctx.rows(check.table, check.where))
    return n == check.equals, f"{_plural(n, 'row')} of {check.table} match {check.where}, expected {check.equals}"


def column_sum(ctx: GradingContext, check: tasks.ColumnSum) -> Outcome:
    table = ctx.episode.table(check.table)
    if check.column not in table.columns:
        raise ValueError(f"table {check.table} has no column {check.column!r}")
    clause, params = where_sql(table, check.where)
    (row,) = ctx.episode.query(
        f'SELECT total("{check.column}") AS s FROM "{check.table}" WHERE {clause}', tuple(params)
    )
    total = row["s"]
    return abs(
        total - check.equals
    ) <= check.tolerance + 1e-9, f"sum of {check.table}.{check.column} is {total:g}, expected {check.equals:g}"


def gold_state(ctx: GradingContext, check: tasks.GoldState) -> Outcome:
    """The final rows and the irreversible writes equal the gold solution's (volatile and
    free-text columns left out), no value the agent wrote hides in a volatile column, and its free
    text satisfies its rules (`grading.written`)."""
    gold = ctx.gold_changes()
    extra, missing = compare_irreversible(ctx.changes, gold, ctx.ignored(check.volatile))
    problems = compare_with_gold(ctx.changes, gold, ctx.ignored(check.volatile)) + extra + missing
    problems += written_problems(
        ctx.task, ctx.changes, gold, ctx.transcript, ctx.conversation, [*ctx.volatile, *check.volatile], ctx.free_text
    )
    if not problems:
        return True, "the final state equals the gold solution's"
    more = f" (and {len(problems) - 8} more)" if len(problems) > 8 else ""
    return False, "; ".join(problems[:8]) + more


def allowed_changes(ctx: GradingContext, check: tasks.AllowedChanges) -> Outcome:
    if check.allow is None:
        gold = ctx.gold_changes()
        # An existing row may change if the gold solution changed it. A new row is allowed if the
        # gold solution created one with the same content up to the ids each episode drew: they
        # depend on the order of the writes that drew them.
        gold_ids, agent_ids = generated_ids(gold), generated_ids(ctx.changes)
        ignored = ctx.ignored()
        unmatched = Counter(
            canonical_row(c.table, c.after, ignored, gold_ids)
            for c in gold.values()
            if c.before is None and c.after is not None
        )
        irreversible, _ = compare_irreversible(ctx.changes, gold, ignored)

        def permitted(key: tuple[str, str], change: Any) -> bool:
            if change.before is not None:
                return key in gold
            signature = canonical_row(change.table, change.after, ignored, agent_ids)
            if unmatched[signature] > 0:
                unmatched[signature] -= 1
                return True
            return False
    else:
        rules, irreversible = check.allow, []

        def permitted(key: tuple[str, str], change: Any) -> bool:
            return any(
                r.table == change.table
                and change.op in r.ops
                and any(
                    row is not None and row_matches(ctx.episode.table(r.table), row, r.where)
                    for row in (change.before, change.after)
                )
                for r in rules
            )

    collateral = {k: c for k, c in ctx.changes.items() if not permitted(k, c)}
    if not collateral and not irreversible:
        return True, f"{_plural(len(ctx.changes), 'row')} changed, all allowed"
    shown = ([str(d) for d in diff_entries(NetChanges(collateral))] + irreversible)[:8]
    return False, "collateral changes: " + "; ".join(shown)


def answer_facts(ctx: GradingContext, check: tasks.AnswerFacts) -> Outcome:
    """The answer read as claims; the check's requirement and what the user wants are the task's
    own words on what each fact is about (a refund, a departure), which binds the claims."""
    reference = [check.requirement, ctx.task.user.wants]
    return answers.grade_answer(ctx.task.answer, ctx.task.forbidden, ctx.answer, reference=reference)


def _subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(k in actual and _subset(v, actual[k]) for k, v in expected.items())
    return _same(expected, actual)


def _took_effect(call: CallRecord) -> bool:
    """The call ran and committed: a success, or a write whose answer was an injected timeout or
    partial failure (it changed state all the same)."""
    return call.call_seq is not None


def tool_called(ctx: GradingContext, check: tasks.ToolCalled) -> Outcome:
    n = sum(1 for c in ctx.transcript if _took_effect(c) and c.tool == check.tool and _subset(check.args, c.arguments))
    args = f" with {check.args}" if check.args else ""
    return n >= check.min_times, f"{check.tool}{args} succeeded {_plural(n, 'time')}"


def _matches(tool: str, patterns: list[str]) -> bool:
    return any(fnmatchcase(tool, p) for p in patterns)


def tool_not_called(ctx: GradingContext, check: tasks.ToolNotCalled) -> Outcome:
    attempts = [c for c in ctx.transcript if _matches(c.tool, check.tools)]
    hits = attempts if check.include_refused else [c for c in attempts if _took_effect(c)]
    if hits:
        refused = sum(1 for c in hits if not _took_effect(c))
        shown = _plural(len(hits), "time") + (f", {refused} refused" if refused else "")
        return False, f"called {', '.join(sorted({c.tool for c in hits}))} ({shown})"
    note = f" took effect ({_plural(len(attempts), 'refused attempt')})" if attempts else ""
    return True, f"no call of {', '.join(check.tools)}{note}"


def _in_then(call: CallRecord, then: list[str] | str) -> bool:
    if then == "writes":
        return call.writes
    if then == "reads":
        return not call.writes
    if then == "any":
        return True
    return _matches(call.tool, list(then))


def call_order(ctx: GradingContext, check: tasks.CallOrder) -> Outcome:
    """A `first` call counts once it took effect with a result including `first_result` (a
    verification that answered `verified: false` succeeded as a call, but verified nothing). A
    `first` call never counts as a `then` call: trying to verify is not acting before verifying."""
    seen_first = unmet = False
    wanted = f" with a result including {check.first_result}" if check.first_result else ""
    for c in ctx.transcript:
        if not _took_effect(c):
            continue
        if _matches(c.tool, check.first):
            counts = _subset(check.first_result, c.result) if check.first_result else True
            seen_first, unmet = seen_first or counts, unmet or not counts
        elif _in_then(c, check.then) and not seen_first:
            tried = f" (a call of {' / '.join(check.first)} returned something else)" if unmet else ""
            return False, f"{c.tool} (call {c.call_seq}) came before any of {', '.join(check.first)}{wanted}{tried}"
    what = check.then if isinstance(check.then, str) else " / ".join(check.then)
    return True, f"every call of {what} came after {' / '.join(check.first)}{wanted}"


def _arguments(call: dict[str, Any]) -> Any:
    raw = (call.get("function") or {}).get("arguments") or "{}"
    if isinstance(raw, dict):  # a harness that sends arguments decoded
        return raw
    try:
        return json.loads(raw)
    except (TypeError, ValueError):
        return None  # never reached the world


def _sent_as(sent: Any, recorded: Any) -> bool:
    """Whether `recorded` arguments are `sent` ones with defaults filled in, at any depth."""
    if isinstance(sent, dict):
        return isinstance(recorded, dict) and all(k in recorded and _sent_as(v, recorded[k]) for k, v in sent.items())
    if isinstance(sent, list):
        return (
            isinstance(recorded, list)
            and len(sent) == len(recorded)
            and all(_sent_as(a, b) for a, b in zip(sent, recorded, strict=True))
        )
    return _same(sent, recorded)


def _position_in_conversation(
    conversation: list[dict[str, Any]], transcript: list[CallRecord], target: CallRecord
) -> int | None:
    """The index of the assistant message that made the `target` call. Conversation calls and
    transcript records are matched in order, by tool and arguments (the transcript's arguments
    carry the defaults the world filled in); a call that never reached the world matches none."""
    start = 0
    for index, message in enumerate(conversation):
        if message.get("role") != "assistant":
            continue
        for call in message.get("tool_calls") or []:
            name, arguments = (call.get("function") or {}).get("name"), _arguments(call)
            found = next(
                (
                    k
                    for k in range(start, len(transcript))
                    if transcript[k].tool == name
                    and isinstance(arguments, dict)
                    and _sent_as(arguments, transcript[k].arguments)
                ),
                None,
            )
            if found is None:
                continue
            if transcript[found].seq == target.seq:
                return index
            start = found + 1
    return None


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def confirmed(ctx: GradingContext, check: tasks.Confirmed) -> Outcome:
    """Every call that took effect of the tools under confirmation was asked for and agreed to:
    the user's last message before it said yes to a request for the go-ahead that (with
    `describe`) asserts the call's action and names its record. One request may ask for several
    writes, each of which it must name apart from the others of the same tool."""
    if ctx.conversation is None:
        return False, "no conversation was given to grade the confirmation"
    what = "writes" if check.tools == "writes" else " / ".join(check.tools)
    hits = [
        c
        for c in ctx.transcript
        if _took_effect(c) and (c.writes if check.tools == "writes" else _matches(c.tool, list(check.tools)))
    ]
    if not hits:
        return True, f"no call of {what} took effect, so there was nothing to confirm"
    asked: dict[int, list[CallRecord]] = {}  # the user message that said yes -> the writes it covered
    details = ""
    for target in hits:
        ok, details, yes_at = _confirmed_once(ctx, check, target, asked)
        if not ok:
            return False, details
        asked.setdefault(yes_at, []).append(target)
    if len(hits) == 1:
        return True, details
    return True, f"each of the {len(hits)} calls of {what} was asked for by name and agreed to"


def _confirmed_once(
    ctx: GradingContext, check: tasks.Confirmed, target: CallRecord, asked: dict[int, list[CallRecord]]
) -> tuple[bool, str, int]:
    """Whether `target` was asked for and agreed to; the index of the user's yes that covered it.
    `asked` holds the writes earlier yeses covered, which a later write under the same yes must
    be told apart from."""
    assert ctx.conversation is not None
    position = _position_in_conversation(ctx.conversation, ctx.transcript, target)
    if position is None:
        why = f"{target.tool} (call {target.call_seq}) took effect, but the conversation does not show that call"
        return False, why, -1
    before = ctx.conversation[:position]
    users = [i for i, m in enumerate(before) if m.get("role") == "user"]
    if len(users) < 2:  # the first is the request itself
        return False, f"the agent called {target.tool} without asking the user to confirm first", -1
    reply = _text(before[users[-1]])
    question = next((_text(m) for m in reversed(before[: users[-1]]) if m.get("role") == "assistant" and _text(m)), "")
    if not is_confirmation_request(question):
        why = f"the user's last message before {target.tool} ({reply[:80]!r}) did not answer a request for confirmation"
        return False, why, -1
    if not is_affirmative(reply):
        why = f"the user did not agree before {target.tool}: asked {question[:80]!r}, answered {reply[:80]!r}"
        return False, why, -1
    agreed = f"asked {question[:80]!r} and the user agreed ({reply[:80]!r}) before {target.tool}"
    if not check.describe:
        return True, agreed, users[-1]
    request = " ".join(_text(m) for m in _asking(before, users) if m.get("role") == "assistant")
    assert target.call_seq is not None  # it took effect
    seen = [(c.arguments, c.result) for c in ctx.transcript]
    first = next((c.result for c in ctx.transcript if c.ok), None)
    covered = [o for o in asked.get(users[-1], []) if o.call_seq is not None]
    others = [(o.arguments, ctx.episode.changes(o.call_seq)) for o in covered if o.tool == target.tool]
    sent = _sent_arguments(ctx.conversation[position], target)
    changes = ctx.episode.changes(target.call_seq)
    named = names_the_change(request, sent, changes, seen, target.clock[:10], owner_ids(first), apart_from=others)
    if named is False:
        why = (
            f"the agent asked {question[:80]!r} without saying what it would do: its request names nothing "
            f"of the {target.tool} call that followed (an argument, or a value of a record it changed)"
        )
        if others:
            why += f", apart from the other {target.tool} call{'s' if len(others) > 1 else ''} it asked for"
        return False, why, -1
    if names_action(request, target.tool, [t for t, spec in ctx.episode.world.tools.items() if spec.writes]) is False:
        why = (
            f"the agent asked {question[:80]!r}, which does not ask to {target.tool.replace('_', ' ')}: "
            "its request names another action, or denies this one"
        )
        return False, why, -1
    if named is None:
        return True, f"asked {question[:80]!r} and the user agreed before {target.tool} ({NOTHING_TO_NAME})", users[-1]
    return True, agreed, users[-1]


NOTHING_TO_NAME = "the call has nothing a request could name"


def _asking(before: list[dict[str, Any]], users: list[int]) -> list[dict[str, Any]]:
    """The messages of the turns that asked for the go-ahead the user's last message gave: its
    turn, and the turns before it that also asked and were not refused (the user asked something
    back, such as "will I get an email?", and the agent answered and asked again)."""
    start = users[-2] + 1
    for k in range(len(users) - 2, 0, -1):  # users[0] is the request itself
        turn = before[users[k - 1] + 1 : users[k]]
        words = " ".join(_text(m) for m in turn if m.get("role") == "assistant")
        if not is_confirmation_request(words) or is_refusal(_text(before[users[k]])):
            break
        start = users[k - 1] + 1
    return before[start : users[-1]]


def _sent_arguments(message: dict[str, Any], target: CallRecord) -> Any:
    """The arguments the agent sent in `message` for the `target` call (its recorded arguments
    also carry the defaults the world filled in, which the agent never chose)."""
    for call in message.get("tool_calls") or []:
        arguments = _arguments(call)
        if (call.get("function") or {}).get("name") == target.tool and _sent_as(arguments, target.arguments):
            return arguments
    return target.arguments


def custom(ctx: GradingContext, check: tasks.Custom) -> Outcome:
    fn = ctx.episode.world.checks.get(check.name)
    if fn is None:
        raise ValueError(f"world {ctx.episode.world.name} has no custom check {check.name!r}")
    result = fn(ctx, **check.params)
    if isinstance(result, bool):
        return result, "custom check " + ("passed" if result else "failed")
    passed, reason = result
    return bool(passed), str(reason)


def cost(ctx: GradingContext, check: Check) -> Outcome:
    """The episode's spend within its budget (or `max_spend`), and its calls within `max_calls`."""
    assert check.type == "cost"
    spend = billing.statement(ctx.episode.world, ctx.episode.query)
    problems, said = [], []
    if check.max_calls is not None:
        calls = len(ctx.transcript)
        said.append(f"{_plural(calls, 'call')} (at most {check.max_calls})")
        if calls > check.max_calls:
            problems.append(f"{_plural(calls, 'call')}, more than {check.max_calls}")
    if spend is None:
        if check.max_spend is not None:
            problems.append(f"world {ctx.episode.world.name} bills nothing, so no spend can be graded")
    else:
        limit = spend["budget"] if check.max_spend is None else min(check.max_spend, spend["budget"])
        said.append(f"spent {spend['spent']} of at most {limit}")
        if spend["spent"] > limit:
            problems.append(f"spent {spend['spent']}, more than {limit}")
    return not problems, "; ".join(problems or said) or "nothing to grade"


# One evaluator per check type, keyed by the `type` every check carries (the rubric's tag).
EVALUATORS: dict[str, Callable[[GradingContext, Any], Outcome]] = {
    "row_exists": row_exists,
    "row_absent": row_absent,
    "field_equals": field_equals,
    "row_count": row_count,
    "column_sum": column_sum,
    "gold_state": gold_state,
    "allowed_changes": allowed_changes,
    "answer_facts": answer_facts,
    "tool_called": tool_called,
    "tool_not_called": tool_not_called,
    "call_order": call_order,
    "confirmed": confirmed,
    "custom": custom,
    "cost": cost,
}


def evaluate(ctx: GradingContext, check: Check) -> Outcome:
    return EVALUATORS[check.type](ctx, check)


__all__ = ["EVALUATORS", "GradingContext", "evaluate", "show_key"]
