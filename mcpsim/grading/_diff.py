"""Net row changes of an episode, from its change log (never a scan of every table), and their
comparison with the gold solution's."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from functools import lru_cache
from typing import Any

from mcpsim.engine import NetChanges
from mcpsim.grading._verdict import DiffEntry


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
                entries.append(
                    DiffEntry(
                        table=table,
                        key=shown,
                        op="update",
                        column=column,
                        before=change.before.get(column),
                        after=change.after[column],
                    )
                )
    return entries


def is_volatile(table: str, column: str, patterns: Sequence[str]) -> bool:
    return any(fnmatchcase(f"{table}.{column}", p) for p in patterns)


@lru_cache(maxsize=4096)
def _kept_columns(table: str, columns: tuple[str, ...], volatile: tuple[str, ...]) -> tuple[str, ...]:
    """The columns of a row that comparisons look at (cached: the same tables and patterns come
    back for every row and every grading)."""
    return tuple(c for c in columns if not is_volatile(table, c, volatile))


class GeneratedIds:
    """How comparisons rename the ids an episode's calls drew (known exactly: the episode records
    them, see `sqlite.read_ids`). Which id a new row gets depends on the order of the writes that
    drew ids, so each becomes its namespace's placeholder (`<new return>`), as a whole column
    value and inside text ("your return ret_0382915 is ..."). Placeholders name the namespace,
    not the draw, so they do not depend on the order either. A value that merely looks like an
    id (an email in a composite key, say) is left alone."""

    def __init__(self, drawn: Mapping[int | str, str]) -> None:
        self.placeholders = {value: f"<new {namespace}>" for value, namespace in drawn.items()}
        texts = sorted((v for v in drawn if isinstance(v, str) and v), key=len, reverse=True)
        self.pattern = re.compile("|".join(_bounded(v) for v in texts)) if texts else None

    def rename(self, value: Any) -> Any:
        kind = type(value)
        if kind is str:
            if value in self.placeholders:
                return self.placeholders[value]
            if self.pattern is not None:
                return self.pattern.sub(lambda m: self.placeholders[m.group()], value)
        elif kind is int and value in self.placeholders:  # not bool or float: True == 1 == 1.0
            return self.placeholders[value]
        return value


def _bounded(code: str) -> str:
    """A regex for an id inside text. An edge digit must not touch another digit (so `1Z` plus a
    tracking number matches, a longer number does not), an edge letter no word character."""
    before = r"(?<!\d)" if code[0].isdigit() else r"(?<!\w)" if code[0].isalnum() or code[0] == "_" else ""
    after = r"(?!\d)" if code[-1].isdigit() else r"(?!\w)" if code[-1].isalnum() or code[-1] == "_" else ""
    return before + re.escape(code) + after


def generated_ids(net: NetChanges) -> GeneratedIds:
    """The renaming for ids drawn by the episode whose changes these are (none for a plain
    dict of changes: nothing is renamed)."""
    return GeneratedIds(getattr(net, "generated", {}))


Row = tuple[tuple[str, Any], ...]


def _canonical(
    table: str, row: dict[str, Any] | None, volatile: Sequence[str], ids: GeneratedIds
) -> dict[str, Any] | None:
    if row is None:
        return None
    return {c: ids.rename(row[c]) for c in _kept_columns(table, tuple(row), tuple(volatile))}


def canonical_row(table: str, row: dict[str, Any], volatile: Sequence[str], ids: GeneratedIds) -> Row:
    """A new row's content as a hashable, comparable value: volatile columns dropped, generated
    ids renamed (a sorted tuple of items: column values are JSON scalars)."""
    canonical = _canonical(table, row, volatile, ids)
    assert canonical is not None
    return tuple(sorted(canonical.items()))


def _summary(row: dict[str, Any]) -> str:
    shown = ", ".join(f"{c}={v!r}" for c, v in list(row.items())[:6])
    return "{" + shown + (", ..." if len(row) > 6 else "") + "}"


def compare_with_gold(agent: NetChanges, gold: NetChanges, volatile: Sequence[str]) -> list[str]:
    """Differences between the agent's final rows and the gold solution's, as sentences (their
    irreversible writes are compared by `effects.compare_irreversible`).

    Rows neither touched are equal by construction: both episodes start from the same template.
    Rows that existed before are compared by key. Inserted rows are compared as a multiset per
    table, with generated ids renamed wherever they appear (in new rows and in references from
    old ones), so independent writes done in another order than the gold solution's still match.
    """
    agent_ids, gold_ids = generated_ids(agent), generated_ids(gold)
    volatile = tuple(volatile)
    problems: list[str] = []
    new_rows: dict[str, tuple[Counter[Row], Counter[Row]]] = {}
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
            problems.append(f"{table}: {n} new row(s) the gold solution does not create: {_summary(dict(row))}")
        for row, n in (want_new - mine_new).items():
            problems.append(f"{table}: {n} new row(s) missing that the gold solution creates: {_summary(dict(row))}")
    return problems
