"""A world's declaration kept as data (`world.yaml`, read by `World.from_manifest`): every world in
the repository declares itself so, and a manifest that is wrong says what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from sqlalchemy import MetaData

from mcpsim.world import World
from mcpsim.world._registry import load_world

WORLDS = Path(__file__).parents[2] / "worlds"


@pytest.mark.parametrize("name", ["airline", "bank", "retail", "workspace"])
def test_every_world_is_the_one_its_manifest_declares(name: str):
    world = load_world(name)
    manifest = yaml.safe_load((WORLDS / name / "world.yaml").read_text(encoding="utf-8"))
    assert (world.name, world.title, world.description) == (
        manifest["name"],
        manifest["title"],
        manifest["description"],
    )
    assert world.scales == manifest["scales"] and list(world.scales) == ["small", "default", "large"]
    assert world.id_formats == {k: (prefix, digits) for k, (prefix, digits) in manifest["id_formats"].items()}
    assert world.policy == (WORLDS / name / "policy.md").read_text(encoding="utf-8")
    assert "world.yaml" in {file for file, _ in world.source_files()}  # a changed manifest changes the version


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "policy.md").write_text("Be kind.\n")
    (tmp_path / "rules.md").write_text("Be brief.\n")
    path = tmp_path / "world.yaml"
    path.write_text(text)
    return path


MINIMAL = "name: toy\ntitle: Toy\ndescription: A toy.\nscales: {default: {rows: 3}}\n"


def test_a_manifest_declares_the_parts_that_are_data(tmp_path: Path):
    path = write(tmp_path, MINIMAL + "id_formats: {row: [r_, 4], code: ['', 6]}\n")
    world = World.from_manifest(path, metadata=MetaData(), revision="2")
    assert (world.name, world.title, world.description, world.scales) == (
        "toy",
        "Toy",
        "A toy.",
        {"default": {"rows": 3}},
    )
    assert world.id_formats == {"row": ("r_", 4), "code": ("", 6)}
    assert world.policy == "Be kind.\n" and world.revision == "2"
    assert (
        World.from_manifest(write(tmp_path, MINIMAL + "policy: rules.md\n"), metadata=MetaData()).policy
        == "Be brief.\n"
    )


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("- a list\n", "must map keys to values, not hold a list"),
        (MINIMAL + "tools: []\nseed: 1\n", "unknown key(s) seed, tools"),
        ("name: toy\ntitle: Toy\n", "missing description, scales"),
        (MINIMAL + "id_formats: {row: [r_, 0]}\n", "id format 'row' must be [prefix, digits > 0], not ['r_', 0]"),
        (MINIMAL + "id_formats: {row: r_0000}\n", "id format 'row' must be [prefix, digits > 0], not 'r_0000'"),
        (MINIMAL + "id_formats: {row: [4, r_]}\n", "id format 'row' must be [prefix, digits > 0]"),
        ("name: toy\ntitle: Toy\ndescription: A toy.\nscales: {small: {}}\n", "scales must include 'default'"),
    ],
)
def test_a_wrong_manifest_says_what_is_wrong(tmp_path: Path, text: str, error: str):
    path = write(tmp_path, text)
    with pytest.raises(ValueError) as raised:
        World.from_manifest(path, metadata=MetaData())
    assert error in str(raised.value)
