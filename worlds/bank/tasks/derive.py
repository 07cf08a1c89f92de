"""Re-derive the caller's identity facts in the bank task files from the seeded world.

The bank tasks were first written by a generator script that was never committed and is lost.
This is not that generator: it re-derives, from the world each task runs on (its seed, scale and
setup), the values of a task that come from seeded data - the caller's name, email, phone number,
ZIP code, date of birth and SSN last four - wherever the task states them:

- `user.knows` (name, email / phone / zip, date_of_birth, ssn_last4);
- the `find_customer` arguments (email, phone, or first_name + last_name + zip) and the
  `verify_identity` arguments (date_of_birth, ssn_last4) of the gold solution, the alternatives
  and the near misses;
- the instruction, where the caller says them ("born May 4, 1992", "SSN ending 4269").

The caller is the customer named by the gold actions' `customer_id`. With `--check` every
mismatch is listed and the exit status is 1; with `--write` the files are rewritten in place
(only those values, formatting kept) and checked again. So re-deriving after a seed change is a
command, not hand edits:

    python -m mcpsim_worlds.bank.tasks.derive --check
    python worlds/bank/tasks/derive.py --write

Values a task deliberately gets wrong (a caller giving SSN digits that do not match) are listed
in `DELIBERATE`; for those, the check is that they still differ from the record. Amounts, ids and
dates in answers and rubrics are not re-derived here: `mcpsim check bank` catches those (the gold
solution no longer passes).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import yaml

from mcpsim.engine import Episode, TemplateCache, process_templates
from mcpsim.tasks import Action, Task, TaskFile, load_task_file, task_episode
from mcpsim.world import World, load_world

TASK_DIR = Path(__file__).resolve().parent

# task id -> identity fields the caller deliberately gets wrong (they must not match the record)
DELIBERATE: dict[str, frozenset[str]] = {
    "refuse-unverified-caller": frozenset({"ssn_last4"}),
}

# task id -> identity values of ANOTHER customer that the task names on purpose (a relative the
# caller asks about): they must still designate a customer other than the caller
OTHERS: dict[str, dict[str, str]] = {
    "refuse-relatives-account": {"email": "jademurray@gmail.com"},
}

# user.knows key -> customers column
KNOWS = {"email": "email", "phone": "phone", "zip": "zip", "date_of_birth": "date_of_birth", "ssn_last4": "ssn_last4"}
FIND_ARGS = {"email": "email", "phone": "phone", "first_name": "first_name", "last_name": "last_name", "zip": "zip"}
VERIFY_ARGS = {"date_of_birth": "date_of_birth", "ssn_last4": "ssn_last4"}


@dataclass(frozen=True)
class Identity:
    """The caller's identity facts as the seeded world holds them."""

    customer_id: str
    first_name: str
    last_name: str
    email: str
    phone: str
    zip: str
    date_of_birth: str
    ssn_last4: str

    @property
    def name(self) -> str:
        return f"{self.first_name} {self.last_name}"

    def field(self, column: str) -> str:
        return self.name if column == "name" else str(getattr(self, column))


@dataclass(frozen=True)
class Mismatch:
    """One value of a task that does not agree with the seeded world."""

    path: Path
    task_id: str
    where: str  # "user.knows.ssn_last4", "gold[2] verify_identity.date_of_birth", "instruction"
    field: str  # the identity field: name, email, phone, zip, date_of_birth, ssn_last4, first_name, ...
    found: str
    expected: str
    deliberate: bool = False  # the task must NOT state the record's value here

    def __str__(self) -> str:
        if self.deliberate:
            return (
                f"{self.path.name}: {self.task_id}: {self.where}: {self.found!r} is deliberately wrong in this "
                "task, but it matches the record; pick another value by hand"
            )
        return (
            f"{self.path.name}: {self.task_id}: {self.where}: {self.found!r}, the seeded world says {self.expected!r}"
        )


# -- the caller and the record ------------------------------------------------------------------


def caller_id(task: Task) -> str | None:
    """The customer the task is about: the `customer_id` of its verification, else of any gold action."""
    ids = [a.args.get("customer_id") for a in task.gold if a.tool == "verify_identity"]
    ids += [a.args.get("customer_id") for a in task.gold]
    return next((i for i in ids if isinstance(i, str)), None)


def _customers(world: World, task: Task, templates: TemplateCache, where: dict[str, str]) -> list[dict[str, Any]]:
    """Customers rows of the task's own initial state (seed, scale and setup)."""
    # A task's setup may change its customers; without one, the seeded template is the state.
    episode = (
        task_episode(world, task, templates=templates, faults=None)
        if task.setup
        else Episode.restore(world, templates.get(world, task.seed, task.scale))
    )
    try:
        return episode.select("customers", where)
    finally:
        episode.close()


def identity(world: World, task: Task, templates: TemplateCache) -> Identity | None:
    """The caller's record in the task's own initial state."""
    customer_id = caller_id(task)
    if customer_id is None:
        return None
    rows = _customers(world, task, templates, {"id": customer_id})
    if not rows:
        raise LookupError(f"task {task.id}: customer {customer_id} does not exist in the seeded world")
    row = rows[0]
    return Identity(
        customer_id,
        *(str(row[c]) for c in ("first_name", "last_name", "email", "phone", "zip", "date_of_birth", "ssn_last4")),
    )


def spoken_date(iso: str) -> str:
    """A date as the callers say it in the instructions: `May 4, 1992`."""
    day = date.fromisoformat(iso)
    return f"{day:%B} {day.day}, {day.year}"


# -- comparing ----------------------------------------------------------------------------------


def _compare(path: Path, task: Task, where: str, field: str, found: Any, who: Identity) -> Iterator[Mismatch]:
    expected = who.field(field)
    if task.id in DELIBERATE and field in DELIBERATE[task.id]:
        if str(found) == expected:
            yield Mismatch(path, task.id, where, field, str(found), expected, deliberate=True)
    elif str(found) != expected:
        yield Mismatch(path, task.id, where, field, str(found), expected)


def identity_actions(task: Task) -> Iterator[tuple[str, Action]]:
    """The calls of the gold solution, the alternatives and the near misses that look the caller
    up or verify them, each with where it is (`gold[1]`, `alternatives[0].steps[1]`)."""
    for number, action in enumerate(task.gold):
        yield f"gold[{number}]", action
    for kind, solutions in (("alternatives", task.alternatives), ("near_misses", task.near_misses)):
        for index, solution in enumerate(solutions):
            for number, step in enumerate(solution.steps or []):
                if isinstance(step, Action):
                    yield f"{kind}[{index}].steps[{number}]", step


def _identity_args(tool: str) -> dict[str, str]:
    return FIND_ARGS if tool == "find_customer" else VERIFY_ARGS if tool == "verify_identity" else {}


def _about_someone_else(task: Task, tool: str, args: dict[str, Any], who: Identity) -> bool:
    """A verification of another customer (a near miss may try one), or a lookup of the other
    person the task names on purpose."""
    if tool == "verify_identity" and args.get("customer_id") != who.customer_id:
        return True
    return any(args.get(key) == value for key, value in OTHERS.get(task.id, {}).items())


def _instruction_states(instruction: str, text: str) -> bool:
    words = [re.escape(w) for w in text.split()]
    return re.search(r"(?<![\w@.-])" + r"\s+".join(words) + r"(?![\w@-])", instruction) is not None


def task_mismatches(path: Path, task: Task, who: Identity) -> list[Mismatch]:
    found: list[Mismatch] = []
    for key, value in task.user.knows.items():
        if key == "name" or key in KNOWS:
            found += _compare(path, task, f"user.knows.{key}", key, value, who)
    for place, action in identity_actions(task):
        if _about_someone_else(task, action.tool, action.args, who):
            continue
        for arg, column in _identity_args(action.tool).items():
            if arg in action.args:
                found += _compare(path, task, f"{place} {action.tool}.{arg}", column, action.args[arg], who)
    # The instruction: the caller says the name, the lookup key, the birth date and the SSN digits
    # as the record holds them (or, where the task gets one wrong on purpose, as user.knows does).
    keep = DELIBERATE.get(task.id, frozenset())
    said = {
        key: str(task.user.knows[key]) if key in keep else who.field(key)
        for key in ("name", "email", "phone", "zip", "date_of_birth", "ssn_last4")
        if key in task.user.knows or key == "name"
    }
    if "date_of_birth" in said:
        said["date_of_birth"] = spoken_date(said["date_of_birth"])
    for key, text in said.items():
        if not _instruction_states(task.instruction, text):
            found.append(Mismatch(path, task.id, "instruction", key, "(not stated)", text))
    return found


def other_people_mismatches(
    world: World, path: Path, task: Task, templates: TemplateCache, caller: str | None
) -> list[Mismatch]:
    """The other customers a task names on purpose still exist, and are not the caller."""
    found = []
    for column, value in OTHERS.get(task.id, {}).items():
        rows = _customers(world, task, templates, {column: value})
        if not rows or rows[0]["id"] == caller:
            found.append(
                Mismatch(
                    path, task.id, f"OTHERS[{task.id!r}].{column}", column, value, "(a customer other than the caller)"
                )
            )
    return found


def check_file(world: World, path: Path, templates: TemplateCache) -> list[Mismatch]:
    task_file = load_task_file(path)
    mismatches: list[Mismatch] = []
    for task in task_file.tasks:
        who = identity(world, task, templates)
        if who is not None:
            mismatches += task_mismatches(path, task, who)
        mismatches += other_people_mismatches(world, path, task, templates, who.customer_id if who else None)
    return mismatches


# -- rewriting ------------------------------------------------------------------------------------


def _task_block(text: str, task_id: str) -> tuple[int, int]:
    """Where the task's entry starts and ends in the file's text."""
    start = text.index(f"\n  - id: {task_id}\n")
    following = text.find("\n  - id: ", start + 1)
    return start, len(text) if following == -1 else following


def _replace_value(line: str, key: str, old: str, new: str) -> str:
    """`key: old` -> `key: new` in a flow-style YAML line, keeping the quoting."""
    pattern = re.compile(rf"(?<![\w])({re.escape(key)}: )(['\"]?){re.escape(old)}\2(?=[,}}\s]|$)")
    return pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{new}{m.group(2)}", line)


def _replace_spoken(block: str, old: str, new: str) -> str:
    """Replace the words of `old` in the instruction, whatever line breaks fold them."""
    words = [re.escape(w) for w in old.split()]
    return re.sub(r"(?<![\w@.-])" + r"\s+".join(words) + r"(?![\w@-])", new, block, count=1)


def rewrite_task(text: str, task: Task, who: Identity) -> str:
    """The file's text with the task's identity values replaced by the record's (deliberately
    wrong values kept)."""
    start, end = _task_block(text, task.id)
    block = text[start:end]
    keep = DELIBERATE.get(task.id, frozenset())
    knows = task.user.knows
    # the instruction first: it is matched by the old values of user.knows
    for key in ("name", "email", "phone", "zip", "ssn_last4"):
        if key in knows and key not in keep and str(knows[key]) != who.field(key):
            head, rest = block.split("    user:\n", 1)
            block = _replace_spoken(head, str(knows[key]), who.field(key)) + "    user:\n" + rest
    if "date_of_birth" in knows and "date_of_birth" not in keep and str(knows["date_of_birth"]) != who.date_of_birth:
        head, rest = block.split("    user:\n", 1)
        block = (
            _replace_spoken(head, spoken_date(str(knows["date_of_birth"])), spoken_date(who.date_of_birth))
            + "    user:\n"
            + rest
        )
    lines = block.split("\n")
    for index, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("knows:"):
            fields = {k: k for k in knows if k == "name" or k in KNOWS}
            values = knows
        elif re.search(r"\btool: (find_customer|verify_identity)\b", stripped):
            action = yaml.safe_load(stripped.removeprefix("- "))  # a flow-style step: {tool: ..., args: {...}}
            fields, values = _identity_args(action["tool"]), action.get("args") or {}
            if _about_someone_else(task, action["tool"], values, who):
                continue
        else:
            continue
        for key, column in fields.items():
            if key in values and column not in keep and str(values[key]) != who.field(column):
                line = _replace_value(line, key, str(values[key]), who.field(column))
        lines[index] = line
    return text[:start] + "\n".join(lines) + text[end:]


def write_file(world: World, path: Path, templates: TemplateCache) -> int:
    """Rewrite the file's identity values from the seeded world; the number of tasks changed."""
    task_file: TaskFile = load_task_file(path)
    text = original = path.read_text(encoding="utf-8")
    changed = 0
    for task in task_file.tasks:
        who = identity(world, task, templates)
        if who is not None and task_mismatches(path, task, who):
            text = rewrite_task(text, task, who)
            changed += 1
    if text != original:
        path.write_text(text, encoding="utf-8")
        load_task_file(path)  # still a valid task file
    return changed


# -- command line ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="derive", description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="list every mismatch; exit 1 if there is any")
    mode.add_argument("--write", action="store_true", help="rewrite the task files from the seeded world")
    parser.add_argument("--tasks", type=Path, default=TASK_DIR, help="the folder of bank task files")
    args = parser.parse_args(argv)

    world, templates = load_world("bank"), process_templates()
    paths = sorted(args.tasks.glob("*.yaml"))
    if not paths:
        print(f"no task files in {args.tasks}", file=sys.stderr)
        return 2
    if args.write:
        for path in paths:
            changed = write_file(world, path, templates)
            if changed:
                print(f"{path.name}: rewrote {changed} task(s)")
    mismatches = [m for path in paths for m in check_file(world, path, templates)]
    for mismatch in mismatches:
        print(mismatch)
    if mismatches:
        what = "left after rewriting (fix by hand)" if args.write else "found"
        print(f"{len(mismatches)} mismatch(es) {what}", file=sys.stderr)
        return 1
    print(f"{len(paths)} bank task files agree with the seeded world")
    return 0


if __name__ == "__main__":
    sys.exit(main())
