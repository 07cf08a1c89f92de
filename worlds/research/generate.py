"""Writes the research world's tasks (`tasks/easy.yaml`, `medium.yaml`, `hard.yaml`, and the hard
tier's long tasks in `long.yaml`) from the universe the seeder draws for seed 0 at the default
scale, so every fact a task states agrees with the corpus. Run again after changing the seeder:

    python -m mcpsim_worlds.research.generate
    python -m mcpsim.tasks.datalock research      # then record the data they were written against
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from mcpsim.world import IdGenerator, SeedContext

from . import world
from .seed import build_universe
from .seed.universe import Organisation
from .tools import pages_of

CANARY = "MCPSIM-CANARY research 7c1e9d04-5b2a-4f3e-9a61-2d8c0b4e7f15"
PER_FAMILY = 6
Task = dict[str, Any]


class Corpus:
    """The universe of seed 0 at the default scale, with the documents' bodies by id."""

    def __init__(self) -> None:
        ctx = SeedContext(
            session=None,  # type: ignore[arg-type]  # nothing is inserted
            seed=0,
            scale="default",
            params=world.scale_params("default"),
            now=world.epoch,
            ids=IdGenerator(0, formats=world.id_formats),
        )
        self.orgs, rows = build_universe(ctx)
        self.docs = {str(r["id"]): r for r in rows}
        self.by_name = {o.name: o for o in self.orgs}

    def pages_holding(self, doc_id: str, text: str) -> list[int]:
        """The pages of `doc_id` that `text` runs over (a page may cut it)."""
        body = str(self.docs[doc_id]["body"]).strip()
        start = body.find(text)
        if start < 0:
            raise ValueError(f"{text!r} is not in {doc_id}")
        found, offset = [], 0
        for number, page in enumerate(pages_of(body), 1):
            offset = body.find(page, offset)
            if offset < start + len(text) and start < offset + len(page):
                found.append(number)
            offset += len(page)
        return found

    def reading(self, doc_id: str, text: str) -> list[dict[str, Any]]:
        """The open calls that reach `text` in `doc_id`: page 1, then the pages it runs over."""
        calls = [{"tool": "open", "args": {"doc_id": doc_id}}]
        for page in self.pages_holding(doc_id, text):
            if page > 1:
                calls.append({"tool": "open", "args": {"doc_id": doc_id, "page": page}})
        return calls

    def sibling(self, org: Organisation) -> Organisation | None:
        """Another organisation whose name starts with the same word (a distractor), if any."""
        stem = org.name.split()[0]
        return next((o for o in self.orgs if o is not org and o.name.split()[0] == stem), None)

    def pick(self, test: Callable[[Organisation], bool], taken: set[str], n: int = PER_FAMILY) -> list[Organisation]:
        found = [o for o in self.orgs if test(o) and o.name not in taken]
        chosen = found[:: max(1, len(found) // n)][:n]
        taken.update(o.name for o in chosen)
        return chosen


def search(query: str) -> dict[str, Any]:
    return {"tool": "search", "args": {"query": query}}


def money(value: float) -> dict[str, Any]:
    return {"money": round(value, 1), "tolerance": 0.05}


def m(value: float) -> str:
    return f"${value:,.1f} million"


def rubric(answer_requirement: str | None, groups: list[list[str]], *, writes: bool = False) -> list[dict[str, Any]]:
    checks: list[dict[str, Any]] = []
    if answer_requirement:
        checks.append({"type": "answer_facts", "requirement": answer_requirement, "noop_passes": False})
    checks.append(
        {
            "type": "custom",
            "name": "opened",
            "requirement": "The agent opened a document each fact rests on (a search snippet is not a source).",
            "params": {"groups": groups},
            "noop_passes": False,
        }
    )
    if not writes:
        nothing = "Nothing in the notebook changed (a question only)."
        checks.append({"type": "gold_state", "requirement": nothing, "noop_passes": True})
    checks.append(
        {"type": "cost", "requirement": "The research stayed within the episode's budget.", "noop_passes": True}
    )
    return checks


def task(
    id: str,
    instruction: str,
    wants: str,
    gold: list[dict[str, Any]],
    answer: list[Any],
    forbidden: list[Any],
    checks: list[dict[str, Any]],
    **rest: Any,
) -> Task:
    made: Task = {"id": id, "instruction": instruction, "user": {"wants": wants}, "gold": gold}
    if answer:
        made["answer"] = answer
    if forbidden:
        made["forbidden"] = forbidden
    return {**made, "rubric": checks, **rest}


def main(argv: list[str] | None = None) -> int:
    """Write the task files into the folder `argv` names (default: the world's `tasks/`)."""
    from .easy_tasks import easy
    from .harder_tasks import hard, medium
    from .long_tasks import long

    corpus = Corpus()
    taken: set[str] = set()
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path(__file__).with_name("tasks")
    for name, family in (("easy", easy), ("medium", medium), ("hard", hard), ("long", long)):
        tasks = family(corpus, taken)
        text = yaml.safe_dump(
            {"world": "research", "canary": CANARY, "volatile": ["notes.created_at"], "tasks": tasks},
            sort_keys=False,
            width=110,
            allow_unicode=True,
        )
        tier = "hard tier, long" if name == "long" else f"{name} tier"
        header = (
            f"# Research tasks, {tier}: written by `python -m mcpsim_worlds.research.generate` from the\n"
            "# universe of seed 0 (do not edit by hand). Validate with: mcpsim check research\n"
        )
        (folder / f"{name}.yaml").write_text(header + text, encoding="utf-8")
        print(f"{name}: {len(tasks)} tasks", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
