"""Seed data kept as data: a world's YAML file is read into a mapping, a malformed one is refused
by name, and the world version covers the data files as it covers the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcpsim.world._registry import load_world
from mcpsim.world._seeding import load_seed_data


def test_seed_data_reads_sections_with_shared_values_by_alias(tmp_path: Path) -> None:
    path = tmp_path / "catalog.yaml"
    path.write_text("palettes:\n  colors: &colors [Black, White]\ntypes:\n- {name: Tee, axes: {color: *colors}}\n")
    data = load_seed_data(path)
    assert data["types"][0]["axes"]["color"] == ["Black", "White"]


def test_seed_data_must_map_section_names(tmp_path: Path) -> None:
    path = tmp_path / "story.yaml"
    path.write_text("- just\n- a list\n")
    with pytest.raises(ValueError, match=r"story\.yaml must map section names to values, not hold a list"):
        load_seed_data(path)


@pytest.mark.parametrize(
    ("world", "data_files"),
    [("workspace", {"story.yaml", "vocabulary.yaml"}), ("retail", {"catalog.yaml"})],
)
def test_the_world_version_covers_its_seed_data(world: str, data_files: set[str]) -> None:
    assert data_files <= {name for name, _ in load_world(world).source_files()}
