"""A spec with a misspelt name anywhere is refused with a SpecError, never another exception
(issue 29: untrusted specs get a precise error). Every occurrence of every entity, field, state
and action name in the example specs is misspelt in turn, and each result must compile or be
refused as a spec error. Before this test, a reference to an unknown entity or state field
crashed the linter with a KeyError traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mcpsim.specs import SpecError, compile_spec, parse_spec

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "specs"


def names(data: dict) -> set[str]:
    """The names a spec defines: its entities, their fields and enum values, its actions."""
    found = set(data["entities"])
    for entity in data["entities"].values():
        for name, field in entity["fields"].items():
            found.add(name)
            found.update(v for v in field.get("values", []) if isinstance(v, str))
    found.update(action["name"] for action in data.get("actions", []))
    return found


def misspellings(text: str) -> list[tuple[str, str]]:
    """(where, the spec text) for each occurrence of each name, misspelt."""
    out = []
    for name in sorted(names(yaml.safe_load(text))):
        for match in re.finditer(rf"(?<![\w.]){re.escape(name)}(?!\w)", text):
            out.append((f"{name}@{match.start()}", text[: match.start()] + name + "q" + text[match.end() :]))
    return out


@pytest.mark.parametrize("spec", sorted(p.name for p in EXAMPLES.glob("*.yaml")))
def test_every_misspelt_name_is_a_spec_error(spec: str) -> None:
    crashes = []
    cases = misspellings((EXAMPLES / spec).read_text())
    assert len(cases) > 50, len(cases)
    for where, text in cases:
        try:
            compile_spec(parse_spec(text, source=where))
        except SpecError:
            continue
        except Exception as exc:  # what the test is for: anything but a SpecError
            crashes.append(f"{where}: {type(exc).__name__}: {exc}")
    assert not crashes, crashes[:10]
