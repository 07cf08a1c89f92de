"""Net row changes of an episode, from its change log (never a scan of every table), and their
comparison with the gold solution's."""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from mcpsim.sqlite import Change
from mcpsim.verifier.verdict import DiffEntry


class NetChange(NamedTuple):
    table: str
    key: str
    before: dict[str, Any] | None  # the row at the start of the episode (None: it did not exist)
    after: dict[str, Any] | None  # the row at the end (None: it no longer exists)

    @property
    def op(self) -> str:
        return "insert" if self.before is None else "delete" if self.after is None else "update"


NetChanges = dict[tuple[str, str], NetChange]


def net_changes(changes: list[Change]) -> NetChanges:
    """First `before` and last `after` per row; rows that ended as they began are dropped."""
    first: dict[tuple[str, str], dict[str, Any] | None] = {}
    last: dict[tuple[str, str], dict[str, Any] | None] = {}
    for c in changes:
        if c.op == "fault":  # injected faults are logged beside row changes; they are not rows
            continue
        key = (c.table, c.key)
        first.setdefault(key, c.before)
        last[key] = c.after
    return {k: NetChange(k[0], k[1], first[k], last[k]) for k in first if first[k] != last[k]}


def show_key(key: str) -> str:
    values = json.loads(key)
    return ", ".join(map(str, values)) if isinstance(values, list) else str(values)


def diff_entries(net: NetChanges) -> list[DiffEntry]:
    entries: list[DiffEntry] = []
    for (table, key), change in sorted(net.items()):
        shown = show_key(key)
        if change.op != "update":
            entries.append(DiffEntry(table=table, key=shown, op=change.op, before=change.before, after=change.after))
            continue
        assert change.before is not None and change.after is not None
        for column in change.after:
            if change.before.get(column) != change.after[column]:
                entries.append(DiffEntry(table=table, key=shown, op="update", column=column,
                                         before=change.before.get(column), after=change.after[column]))
    return entries


def is_volatile(table: str, column: str, patterns: list[str]) -> bool:
    return any(fnmatchcase(f"{table}.{column}", p) for p in patterns)


def _stable(table: str, row: dict[str, Any] | None, volatile: list[str]) -> dict[str, Any] | None:
    return None if row is None else {c: v for c, v in row.items() if not is_volatile(table, c, volatile)}


def compare_with_gold(agent: NetChanges, gold: NetChanges, volatile: list[str]) -> list[str]:
    """Differences between the agent's final rows and the gold solution's, as sentences. Rows
    neither touched are equal by construction: both episodes start from the same template."""
    problems: list[str] = []
    for key in sorted(set(agent) | set(gold)):
        table, row_key = key
        initial = (agent.get(key) or gold[key]).before
        mine = _stable(table, agent[key].after if key in agent else initial, volatile)
        want = _stable(table, gold[key].after if key in gold else initial, volatile)
        if mine == want:
            continue
        where = f"{table} {show_key(row_key)}"
        if want is None:
            problems.append(f"{where}: should not exist at the end" if initial is None else f"{where}: should be deleted")
        elif mine is None:
            problems.append(f"{where}: should exist at the end" if initial is None else f"{where}: should not be deleted")
        else:
            for column in sorted(set(mine) | set(want)):
                if mine.get(column) != want.get(column):
                    problems.append(f"{where} {column}: expected {want.get(column)!r}, got {mine.get(column)!r}")
    return problems
