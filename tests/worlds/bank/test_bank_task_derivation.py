"""The bank task files state the caller's identity as the seeded world holds it, and the
re-derivation tool (`worlds/bank/tasks/derive.py`; the original generator of the bank tasks is
lost) finds every drifted value and writes it back."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcpsim_worlds.bank.tasks import derive

from mcpsim.engine._templates import process_templates
from mcpsim.tasks import load_task_file
from mcpsim.world._registry import load_world

TASKS = Path(derive.__file__).resolve().parent


def test_the_bank_task_files_agree_with_the_seeded_world():
    result = subprocess.run(
        [sys.executable, "-m", "mcpsim_worlds.bank.tasks.derive", "--check"],
        check=False,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "9 bank task files agree with the seeded world" in result.stdout


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for path in TASKS.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    return tmp_path


def _drift(path: Path, task_id: str, edits: list[tuple[str, str]]) -> None:
    """What a seed change does to a task file: the world moved, the file still says the old values."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"  - id: {task_id}\n")
    end = text.find("\n  - id: ", start + 1)
    block = text[start:end]
    for old, new in edits:
        assert old in block, old
        block = block.replace(old, new)
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


DRIFTS = {
    "date of birth": (
        "account.yaml",
        "update-email-and-phone",
        [("May 4, 1992", "May 5, 1992"), ("'1992-05-04'", "'1992-05-05'")],
        ["user.knows.date_of_birth", "gold[1] verify_identity.date_of_birth", "instruction"],
    ),
    "ssn and phone": (
        "cards.yaml",
        "unfreeze-found-card",
        [("7187", "7817"), ("597-643-7889", "597-643-7898")],
        [
            "user.knows.ssn_last4",
            "gold[1] verify_identity.ssn_last4",
            "user.knows.phone",
            "gold[0] find_customer.phone",
            "instruction",
        ],
    ),
    "name and zip": (
        "transfers.yaml",
        "add-payee-and-send",
        [("Courtney Horton", "Courtney Hortin"), ("Horton", "Hortin"), ("50886", "50868")],
        [
            "user.knows.name",
            "gold[0] find_customer.last_name",
            "user.knows.zip",
            "gold[0] find_customer.zip",
            "instruction",
        ],
    ),
}


@pytest.mark.parametrize("drift", list(DRIFTS), ids=list(DRIFTS))
def test_check_lists_every_drifted_value_and_write_restores_the_file(copy, capsys, drift):
    file, task_id, edits, places = DRIFTS[drift]
    original = (copy / file).read_text(encoding="utf-8")
    _drift(copy / file, task_id, edits)

    assert derive.main(["--check", "--tasks", str(copy)]) == 1
    out = capsys.readouterr().out
    listed = [line for line in out.splitlines() if line.startswith(f"{file}: {task_id}: ")]
    assert listed and all(any(f": {place}: " in line for line in listed) for place in places), out
    mismatches = [line for line in out.splitlines() if re.match(r"\w+\.yaml: ", line)]
    assert all(f": {task_id}: " in line for line in mismatches), out  # only the drifted task

    assert derive.main(["--write", "--tasks", str(copy)]) == 0
    assert (copy / file).read_text(encoding="utf-8") == original


def test_a_deliberately_wrong_detail_must_stay_wrong(copy, capsys):
    # refuse-unverified-caller: the caller gives SSN digits that do not match the record
    path = copy / "refusals.yaml"
    task = next(t for t in load_task_file(path).tasks if t.id == "refuse-unverified-caller")
    record = derive.identity(load_world("bank"), task, process_templates())
    assert record is not None and task.user.knows["ssn_last4"] != record.ssn_last4
    _drift(path, task.id, [(str(task.user.knows["ssn_last4"]), record.ssn_last4)])

    assert derive.main(["--check", "--tasks", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "refuse-unverified-caller: user.knows.ssn_last4:" in out and "deliberately wrong" in out
    # --write does not invent another wrong value: it says so and leaves it to a person
    assert derive.main(["--write", "--tasks", str(copy)]) == 1
    assert "left after rewriting" in capsys.readouterr().err


def test_the_spoken_date_is_how_callers_say_it():
    assert derive.spoken_date("1992-05-04") == "May 4, 1992"
    assert derive.spoken_date("1966-12-31") == "December 31, 1966"
