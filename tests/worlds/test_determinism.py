"""Worlds do not move with the wall clock or the machine: every template CI builds has the same
hash under a wall clock shifted a year either way, `mcpsim check` passes there, and world code
is linted against the wall clock and global random state."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest

from mcpsim.engine import _store as store
from mcpsim.world._registry import load_world, world_names

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).parents[1] / "support" / "clock_probe.py"
LIBFAKETIME = [
    Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"),
    Path("/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1"),
    Path("/usr/lib/faketime/libfaketime.so.1"),
]

# Faker providers that read today's date or the wall clock (faker/providers/date_time and the
# few others built on it). World code must derive dates from the world's epoch instead.
FAKER_CLOCK_METHODS = {
    "date_of_birth",
    "date_between",
    "date_between_dates",
    "date_time_between",
    "date_time_between_dates",
    "date_this_century",
    "date_this_decade",
    "date_this_year",
    "date_this_month",
    "date_time_this_century",
    "date_time_this_decade",
    "date_time_this_year",
    "date_time_this_month",
    "past_date",
    "future_date",
    "past_datetime",
    "future_datetime",
    "date",
    "date_time",
    "date_time_ad",
    "date_object",
    "time",
    "time_object",
    "iso8601",
    "unix_time",
    "time_series",
    "year",
    "month",
    "day_of_month",
    "century",
    "credit_card_expire",
    "passport_dates",
    "passport_dob",
    "timezone",
}


def _libfaketime() -> Path | None:
    return next((p for p in LIBFAKETIME if p.exists()), None)


def _probe(shift_days: int | None, check: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSIM_")}
    if shift_days is not None:
        lib = _libfaketime()
        assert lib is not None
        env |= {"LD_PRELOAD": str(lib), "FAKETIME": f"{shift_days:+d}d", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}
    out = subprocess.run(
        [sys.executable, str(PROBE), *([check] if check else [])],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.system
@pytest.mark.skipif(
    _libfaketime() is None and not os.environ.get("CI"),
    reason="libfaketime (Debian package faketime) is not installed; .ci/run installs it",
)
def test_every_template_and_task_set_is_the_same_a_year_ahead_and_a_year_behind() -> None:
    assert _libfaketime() is not None, "CI must install libfaketime (apt-get install faketime)"
    # One at a time: two processes under libfaketime at once run several times slower. A year
    # ahead, `mcpsim check` without the cheating battery (gold twice, do-nothing, alternatives,
    # near misses); a year behind, the templates (all that the clock could move) must hash the
    # same; unshifted, the whole `mcpsim check` of every world, cheating battery included.
    ahead, behind = _probe(365, check="--check"), _probe(-365, check=None)
    here = _probe(None, check="--full-check")
    today = date.fromisoformat(here["today"])
    # the shift really happened in the child processes (else this test would prove nothing)
    assert 360 <= (date.fromisoformat(ahead["today"]) - today).days <= 370
    assert 360 <= (today - date.fromisoformat(behind["today"])).days <= 370
    assert set(here["hashes"]) == {f"{w}/{s}" for w in world_names() for s in ("small", "default")}
    assert ahead["hashes"] == here["hashes"]
    assert behind["hashes"] == here["hashes"]
    assert ahead["checks"] == {w: [] for w in world_names()}
    assert here["checks"] == {w: [] for w in world_names()}


def test_world_code_does_not_call_faker_date_providers() -> None:
    offenders = []
    for path in sorted((ROOT / "worlds").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in FAKER_CLOCK_METHODS
                and _is_faker(node.func.value)
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node.func)}")
    assert offenders == []


def _is_faker(expr: ast.expr) -> bool:
    """`fake`, `faker`, `ctx.faker`, `self.faker`, `b.fake` ...: the names world code gives Faker."""
    name = expr.attr if isinstance(expr, ast.Attribute) else expr.id if isinstance(expr, ast.Name) else ""
    return name in {"fake", "faker"}


def test_the_faker_check_catches_a_date_provider(tmp_path: Path) -> None:
    tree = ast.parse("born = ctx.faker.date_of_birth(minimum_age=18)\nwhen = fake.past_date()\n")
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in FAKER_CLOCK_METHODS
        and _is_faker(n.func.value)
    ]
    assert len(calls) == 2


def _ruff() -> str:
    found = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    assert found, "ruff is a test dependency (pip install -e '.[test]')"
    return found


def test_world_code_passes_the_wall_clock_and_global_random_lint() -> None:
    out = subprocess.run(
        [_ruff(), "check", "--select", "TID251", "--no-cache", "worlds/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.parametrize(
    "source",
    [
        "from datetime import datetime\nnow = datetime.now()\n",
        "import datetime\ntoday = datetime.date.today()\n",
        "import time\nstarted = time.time()\n",
        "import random\npick = random.choice([1, 2])\n",
        "from random import randint\nn = randint(1, 6)\n",
        "import uuid\nkey = uuid.uuid4()\n",
    ],
)
def test_the_lint_refuses_wall_clock_and_global_random_calls(tmp_path: Path, source: str) -> None:
    world_file = tmp_path / "tools.py"
    world_file.write_text(source)
    out = subprocess.run(
        [
            _ruff(),
            "check",
            "--config",
            str(ROOT / "pyproject.toml"),
            "--select",
            "TID251",
            "--no-cache",
            str(world_file),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 1 and "TID251" in out.stdout, out.stdout + out.stderr


def test_the_template_hash_does_not_depend_on_the_process() -> None:
    """A second process (another PYTHONHASHSEED) builds airline's small template to the same hash
    as this one; airline drew birth dates from the wall clock before."""
    from mcpsim.engine._templates import TemplateCache

    world = load_world("airline")
    conn = store.connect(TemplateCache(None).get(world, 0, "small"))
    mine = store.full_state_hash(conn, world.metadata)
    conn.close()
    code = (
        "from mcpsim.engine import _store as store; from mcpsim.world._registry import load_world; "
        "from mcpsim.engine._templates import TemplateCache; w = load_world('airline'); "
        "c = store.connect(TemplateCache(None).get(w, 0, 'small')); "
        "print(store.full_state_hash(c, w.metadata))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPSIM_")} | {"PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == mine
