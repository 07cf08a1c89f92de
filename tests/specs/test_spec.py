"""The world spec: the published JSON Schema is current, and a spec that refers to what does not
exist is refused with the place it went wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from mcpsim.specs._spec import ISO_DATETIME, FieldSpec, SpecError, json_schema, load_spec, parse_spec

ROOT = Path(__file__).parents[2]
LIBRARY = ROOT / "examples" / "specs" / "library.yaml"


def library() -> dict:
    return yaml.safe_load(LIBRARY.read_text())


def test_the_published_schema_is_generated_from_the_models():
    published = json.loads((ROOT / "schemas" / "world-spec.schema.json").read_text())
    assert published == json_schema(), "run: python -m mcpsim.acceptance schema > schemas/world-spec.schema.json"


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "specs").glob("*.yaml")), ids=lambda p: p.stem)
def test_the_example_specs_parse(path):
    spec = load_spec(path)
    assert spec.actions and spec.entities


def test_the_digest_follows_content_not_formatting():
    data = library()
    assert parse_spec(data).digest() == parse_spec(json.loads(json.dumps(data))).digest()
    data["actions"][0]["description"] = "Find a member by their id."
    assert parse_spec(data).digest() != load_spec(LIBRARY).digest()


def _broken(edit) -> str:
    data = library()
    edit(data)
    with pytest.raises(SpecError) as caught:
        parse_spec(data, source="library")
    return str(caught.value)


def test_unknown_rows_fields_and_states_are_named():
    def unknown_alias(d):
        d["actions"][8]["preconditions"][0]["require"]["left"] = "patron.status"

    def unknown_field(d):
        d["actions"][8]["effects"][0]["field"] = "stock"

    def unknown_state(d):
        d["entities"]["loan"]["state_machine"]["transitions"]["open"].append("burned")

    assert "action lend_book.member_suspended: no row 'patron' in scope" in _broken(unknown_alias)
    assert "action lend_book.effects[0]: book has no field 'stock'" in _broken(unknown_field)
    assert "entity loan: state 'burned' is not a value of status" in _broken(unknown_state)


def test_a_clock_reading_faker_provider_is_refused():
    def clock(d):
        d["entities"]["loan"]["fields"]["lent_on"]["generator"] = {"faker": "date_this_year"}

    assert "reads the wall clock" in _broken(clock)


def test_a_transition_nobody_can_reach_and_a_reference_cycle_are_refused():
    def unreachable(d):
        d["actions"][9]["to"] = "open"

    def cycle(d):
        d["entities"]["book"]["fields"]["last_loan_id"] = {"type": "ref", "entity": "loan"}

    assert "no transition leads to 'open'" in _broken(unreachable)
    assert "references form a cycle" in _broken(cycle)


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ({"type": "int", "min": 0, "max": 9}, 5, None),
        ({"type": "int", "min": 0}, -1, "-1 is below the minimum 0"),
        ({"type": "money", "max": 9.5}, 10, "10 is above the maximum 9.5"),
        ({"type": "enum", "values": ["a", "b"]}, "c", "'c' is not one of ['a', 'b']"),
        ({"type": "str"}, None, "is empty but not optional"),
        ({"type": "str", "optional": True}, None, None),
        ({"type": "str", "max_length": 3}, "abcd", "is 4 characters, more than 3"),
        ({"type": "str", "min_length": 2}, "a", "is 1 characters, fewer than 2"),
        ({"type": "str", "pattern": "^[A-Z]+$"}, "ab", "'ab' does not match ^[A-Z]+$"),
        ({"type": "date"}, "2026-12-07", None),
        ({"type": "date"}, "07/12/2026", r"'07/12/2026' does not match ^\d{4}-\d{2}-\d{2}$"),
        ({"type": "datetime"}, "2026-12-07T10:00:00+00:00", None),
        ({"type": "datetime"}, "2026-12-07", f"'2026-12-07' does not match {ISO_DATETIME}"),
    ],
)
def test_a_stored_value_is_checked_against_its_field(field, value, problem):
    assert FieldSpec.model_validate(field).problem(value) == problem
