"""The YAML shipped with worlds (task files, manifests, seed data, fault profiles, catalogue
blueprints) is parsed with libyaml's C loader when PyYAML has it: the data must be exactly what
the pure-Python SafeLoader builds (same types, same key order), or task hashes would move."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcpsim._yaml import TrustedLoader, load_trusted
from mcpsim.tasks import TaskFileError, load_task_file

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted([*(ROOT / "worlds").rglob("*.yaml"), *(ROOT / "mcpsim" / "catalogue" / "blueprints").glob("*.yaml")])


def _typed(data: Any) -> str:
    """The data with every scalar's type spelled out, keys in their order."""
    return json.dumps(data, default=lambda v: f"{type(v).__name__}:{v!r}", sort_keys=False)


def test_every_shipped_task_file_is_found() -> None:
    assert len([p for p in SHIPPED if p.parent.name == "tasks"]) >= 30
    assert any(p.parent.name == "blueprints" for p in SHIPPED)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_c_loader_builds_the_same_data_as_the_python_one(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert _typed(load_trusted(text)) == _typed(yaml.load(text, Loader=yaml.SafeLoader))


def test_the_c_loader_is_used_where_pyyaml_has_it() -> None:
    assert TrustedLoader is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)


def test_the_trusted_loader_is_safe() -> None:
    with pytest.raises(yaml.YAMLError):
        load_trusted("!!python/object/apply:os.system ['true']")


def test_a_malformed_task_file_is_still_a_task_file_error(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("world: retail\ntasks: [unclosed\n", encoding="utf-8")
    with pytest.raises(TaskFileError, match="broken.yaml"):
        load_task_file(path)
