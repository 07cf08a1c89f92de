"""Irreversible writes: what the calls of irreversible tools wrote, as it was right after each call.

Net changes net out a row inserted and later deleted: a message sent and then deleted leaves no
net change, yet its recipients got it. A tool declared `@world.tool(irreversible=True)` has an
effect that leaves the world (a message sent, a payment made, a file shared), so grading also
compares, agent against gold, what each committed call of such a tool wrote:

- a row it **inserted**, as it was right after that call (volatile and free-text columns dropped,
  generated ids renamed as in `diff.py`), as a multiset per table;
- a row it **deleted**, by key, as a multiset;
- a column it **updated**: per (row, column), how many irreversible calls changed it and the value
  the last of them left. An update counts as an event, not a state: declining an invitation and
  then accepting it notified the organiser twice, so it differs from accepting once, even though
  the final row is the same. Counting per column (not the intermediate values) keeps the
  comparison independent of order: two payments from one account in either order change its
  balance twice and leave it at the same value.

A call that repeats an earlier committed call of the same tool with the same arguments left the
world again even when it changed nothing (volatile columns aside): an invitation answered twice,
a file shared twice with the same people sent two notices. Such **repeats** are counted per tool,
and the agent may make no more of them than the gold solution does. A first call that finds the
world already so (making sure a link is off) repeats nothing and is not counted.

A call that was refused or rolled back wrote nothing, so retrying a failed irreversible call is
free; the order of irreversible calls never matters."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from mcpsim.engine import Change, Episode, NetChange, NetChanges, net_changes
from mcpsim.grading._diff import GeneratedIds, canonical_row, generated_ids, is_volatile, show_key

Write = tuple[str, Change]  # an irreversible tool and one row its call changed, netted over the call


class EpisodeChanges(NetChanges):
    """An episode's net changes together with its irreversible writes (what grading compares):
    the rows each committed call of an irreversible tool changed, as change-log entries netted
    over the call (the image before and right after it), each with its tool, in call order."""

    def __init__(
        self,
        changes: Mapping[tuple[str, str], NetChange],
        generated: Mapping[int | str, str],
        irreversible: Sequence[Write],
        repeated: Mapping[int, str] | None = None,
    ) -> None:
        super().__init__(changes, generated)
        self.irreversible: list[Write] = list(irreversible)
        # committed calls of an irreversible tool with the arguments of an earlier committed call
        # of it (call number -> tool), whether or not they changed a row
        self.repeated: dict[int, str] = dict(repeated or {})


def irreversible_calls(episode: Episode) -> tuple[dict[int, str], dict[int, str]]:
    """Every committed call of an irreversible tool (call number -> tool), and those among them
    that repeat an earlier one's arguments."""
    tools = {name for name, spec in episode.world.tools.items() if spec.irreversible}
    calls: dict[int, str] = {}
    repeated: dict[int, str] = {}
    seen: set[tuple[str, str]] = set()
    for c in episode.transcript():
        if c.call_seq is None or c.tool not in tools:
            continue
        calls[c.call_seq] = c.tool
        made = (c.tool, json.dumps(c.arguments, sort_keys=True, default=str))
        if made in seen:
            repeated[c.call_seq] = c.tool
        seen.add(made)
    return calls, repeated


def irreversible_writes(episode: Episode, calls: Mapping[int, str] | None = None) -> list[Write]:
    """The rows each committed call of an irreversible tool changed, per call, in call order."""
    calls = irreversible_calls(episode)[0] if calls is None else calls
    if not calls:
        return []
    per_call: dict[int, list[Change]] = defaultdict(list)
    for change in episode.changes():
        if change.call_seq in calls:
            per_call[change.call_seq].append(change)
    return [
        (calls[seq], Change(seq, table, net.op, key, net.before, net.after))
        for seq in sorted(per_call)
        for (table, key), net in sorted(net_changes(per_call[seq]).items())
    ]


def episode_changes(episode: Episode) -> EpisodeChanges:
    """Net changes, drawn ids and irreversible writes of `episode`."""
    net = episode.net_changes()
    calls, repeated = irreversible_calls(episode)
    return EpisodeChanges(net, net.generated, irreversible_writes(episode, calls), repeated)


def writes_of(changes: NetChanges) -> list[Write]:
    """The irreversible writes carried by `changes` (none for plain net changes)."""
    return list(getattr(changes, "irreversible", []))


def repeats_of(changes: NetChanges) -> dict[int, str]:
    """The repeated irreversible calls carried by `changes` (none for plain net changes)."""
    return dict(getattr(changes, "repeated", {}))


# -- comparison -----------------------------------------------------------------------------------

_Insert = tuple[str, tuple[tuple[str, Any], ...]]  # table, canonical row
_Delete = tuple[str, str]  # table, renamed key
_Column = tuple[str, str, str]  # table, renamed key, column


class _Effects:
    """One episode's irreversible writes, in the order-independent form they are compared in."""

    def __init__(self, changes: NetChanges, ignored: tuple[str, ...], ids: GeneratedIds) -> None:
        self.tool_of: dict[int, str] = {}  # the tool of each irreversible call, by call number
        self.inserts: Counter[_Insert] = Counter()
        self.deletes: Counter[_Delete] = Counter()
        self.updates: dict[_Column, tuple[int, tuple[Any, ...]]] = {}  # how many changes, the last values
        self.by_insert: dict[_Insert, Change] = {}
        self.by_delete: dict[_Delete, Change] = {}
        self.tools: dict[_Column, list[str]] = defaultdict(list)
        per_row: dict[tuple[str, str, str], tuple[int, Any]] = {}  # by the row's own key, before renaming
        counted: set[int] = set()  # the calls whose writes are compared above
        for tool, write in writes_of(changes):
            self.tool_of[write.call_seq] = tool
            key = ids.rename(write.key)
            if write.after is not None and write.before is None:
                signature = (write.table, canonical_row(write.table, write.after, ignored, ids))
                self.inserts[signature] += 1
                self.by_insert.setdefault(signature, write)
                counted.add(write.call_seq)
            elif write.after is None:
                self.deletes[(write.table, key)] += 1
                self.by_delete.setdefault((write.table, key), write)
                counted.add(write.call_seq)
            else:
                assert write.before is not None
                for column, value in write.after.items():
                    if write.before.get(column) == value or is_volatile(write.table, column, ignored):
                        continue
                    counted.add(write.call_seq)
                    count, _ = per_row.get((write.table, write.key, column), (0, None))
                    per_row[(write.table, write.key, column)] = (count + 1, ids.rename(value))
                    self.tools[(write.table, key, column)].append(tool)
        # rows the episode created share one renamed key (`<new event>`): their counts add up and
        # their last values form a multiset, so which new row was updated first does not matter
        for (table, own_key, column), (count, last) in per_row.items():
            renamed = (table, ids.rename(own_key), column)
            total, lasts = self.updates.get(renamed, (0, ()))
            self.updates[renamed] = (total + count, tuple(sorted((*lasts, last), key=repr)))
        # repeated calls that changed nothing compared above, per tool
        self.repeats: dict[str, list[int]] = defaultdict(list)
        for seq, tool in sorted(repeats_of(changes).items()):
            if seq not in counted:
                self.repeats[tool].append(seq)


def _summary(row: Mapping[str, Any]) -> str:
    shown = ", ".join(f"{c}={v!r}" for c, v in list(row.items())[:6])
    return "{" + shown + (", ..." if len(row) > 6 else "") + "}"


def _fate(write: Change, final: NetChanges) -> str:
    """What became of a row an irreversible call inserted, by the end of the episode."""
    change = final.get((write.table, write.key))
    if change is None or change.after is None:
        return " and later deleted"
    if change.after != write.after:
        return " and later changed"
    return ""


def compare_irreversible(agent: NetChanges, gold: NetChanges, ignored: Sequence[str]) -> tuple[list[str], list[str]]:
    """Irreversible writes the agent made that the gold solution does not (first list), and those
    of the gold solution the agent did not make (second), as sentences."""
    ignored = tuple(ignored)
    agent_ids, gold_ids = generated_ids(agent), generated_ids(gold)
    mine = _Effects(agent, ignored, agent_ids)
    want = _Effects(gold, ignored, gold_ids)
    extra: list[str] = []
    missing: list[str] = []
    for signature, n in sorted((mine.inserts - want.inserts).items(), key=str):
        write = mine.by_insert[signature]
        tool = mine.tool_of[write.call_seq]
        times = f" ({n} times)" if n > 1 else ""
        extra.append(
            f"{write.table} {show_key(agent_ids.rename(write.key))}: written by {tool} (call "
            f"{write.call_seq}){_fate(write, agent)}{times}; {tool} is irreversible and the gold "
            f"solution writes no such row: {_summary(dict(signature[1]))}"
        )
    for signature, n in sorted((want.inserts - mine.inserts).items(), key=str):
        write = want.by_insert[signature]
        missing.append(
            f"{write.table}: {n} row(s) the gold solution's {want.tool_of[write.call_seq]} writes, never written here: "
            f"{_summary(dict(signature[1]))}"
        )
    for table, key in sorted(mine.deletes - want.deletes):
        write = mine.by_delete[(table, key)]
        tool = mine.tool_of[write.call_seq]
        extra.append(
            f"{table} {show_key(key)}: deleted by {tool} (call {write.call_seq}); {tool} is "
            "irreversible and the gold solution does not delete it"
        )
    for table, key in sorted(want.deletes - mine.deletes):
        tool = want.tool_of[want.by_delete[(table, key)].call_seq]
        missing.append(f"{table} {show_key(key)}: the gold solution's {tool} deletes it, never deleted here")
    for column in sorted(set(mine.updates) | set(want.updates)):
        (n, last), (m, gold_last) = mine.updates.get(column, (0, ())), want.updates.get(column, (0, ()))
        table, key, name = column
        where = f"{table} {show_key(key)} {name}"
        if n > m:
            extra.append(
                f"{where}: changed by {n} irreversible call(s) ({', '.join(mine.tools[column])}), the gold "
                f"solution's by {m}; each change left the world"
            )
        elif n < m:
            missing.append(
                f"{where}: changed by {n} irreversible call(s), the gold solution's by {m} "
                f"({', '.join(want.tools[column])})"
            )
        elif last != gold_last:
            shown, gold_shown = (v[0] if len(v) == 1 else list(v) for v in (last, gold_last))
            extra.append(f"{where}: irreversible calls last set it to {shown!r}, the gold solution's to {gold_shown!r}")
    for tool in sorted(mine.repeats):
        seqs, allowed = mine.repeats[tool], len(want.repeats.get(tool, []))
        if len(seqs) > allowed:
            shown_calls = ", ".join(map(str, seqs[:6]))
            extra.append(
                f"{tool}: {len(seqs)} call(s) repeating an earlier one and changing nothing (call {shown_calls}), "
                f"the gold solution's {allowed}; {tool} is irreversible, so each left the world again "
                "(a repeated effect)"
            )
    return extra, missing
