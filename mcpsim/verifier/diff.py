"""Net row changes of an episode, from its change log (never a scan of every table), and their
comparison with the gold solution's."""

from __future__ import annotations

import json
from collections import Counter
from fnmatch import fnmatchcase
from typing import Any, NamedTuple

from mcpsim.sqlite import NetChange, NetChanges, net_changes  # noqa: F401  (re-exported)
from mcpsim.verifier.verdict import DiffEntry


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


def generated_ids(net: NetChanges) -> dict[str, str]:
    """String primary-key values of rows the episode inserted, with their table. Which value a
    new row gets depends on the order of the writes that drew ids, so comparisons rename them."""
    ids: dict[str, str] = {}
    for (table, key), change in net.items():
        if change.before is None and change.after is not None:
            for value in json.loads(key):
                if isinstance(value, str):
                    ids[value] = table
    return ids


def _canonical(table: str, row: dict[str, Any] | None, volatile: list[str],
               generated: dict[str, str]) -> dict[str, Any] | None:
    if row is None:
        return None
    return {c: f"<new {generated[v]} row>" if isinstance(v, str) and v in generated else v
            for c, v in row.items() if not is_volatile(table, c, volatile)}


def canonical_row(table: str, row: dict[str, Any] | None, volatile: list[str], generated: dict[str, str]) -> str:
    """A new row's content as a comparable string: volatile columns dropped, generated ids renamed."""
    return json.dumps(_canonical(table, row, volatile, generated), sort_keys=True, default=str)


def _summary(row: dict[str, Any]) -> str:
    shown = ", ".join(f"{c}={v!r}" for c, v in list(row.items())[:6])
    return "{" + shown + (", ..." if len(row) > 6 else "") + "}"


def compare_with_gold(agent: NetChanges, gold: NetChanges, volatile: list[str]) -> list[str]:
    """Differences between the agent's final rows and the gold solution's, as sentences.

    Rows neither touched are equal by construction: both episodes start from the same template.
    Rows that existed before are compared by key. Inserted rows are compared as a multiset per
    table, with generated ids renamed wherever they appear (in new rows and in references from
    old ones), so independent writes done in another order than the gold solution's still match.
    """
    agent_ids, gold_ids = generated_ids(agent), generated_ids(gold)
    problems: list[str] = []
    new_rows: dict[str, tuple[Counter[str], Counter[str]]] = {}
    for key in sorted(set(agent) | set(gold)):
        table, row_key = key
        mine_change, want_change = agent.get(key), gold.get(key)
        initial = (mine_change or want_change).before  # type: ignore[union-attr]
        if initial is None:  # inserted (by one or both): compared as a multiset below
            mine_new, want_new = new_rows.setdefault(table, (Counter(), Counter()))
            for change, ids, bag in ((mine_change, agent_ids, mine_new), (want_change, gold_ids, want_new)):
                if change is not None and change.after is not None:
                    bag[canonical_row(table, change.after, volatile, ids)] += 1
            continue
        mine = _canonical(table, mine_change.after if mine_change else initial, volatile, agent_ids)
        want = _canonical(table, want_change.after if want_change else initial, volatile, gold_ids)
        if mine == want:
            continue
        where = f"{table} {show_key(row_key)}"
        if want is None:
            problems.append(f"{where}: should be deleted")
        elif mine is None:
            problems.append(f"{where}: should not be deleted")
        else:
            for column in sorted(set(mine) | set(want)):
                if mine.get(column) != want.get(column):
                    problems.append(f"{where} {column}: expected {want.get(column)!r}, got {mine.get(column)!r}")
    for table, (mine_new, want_new) in sorted(new_rows.items()):
        for row, n in (mine_new - want_new).items():
            problems.append(f"{table}: {n} new row(s) the gold solution does not create: {_summary(json.loads(row))}")
        for row, n in (want_new - mine_new).items():
            problems.append(f"{table}: {n} new row(s) missing that the gold solution creates: "
                            f"{_summary(json.loads(row))}")
    return problems
