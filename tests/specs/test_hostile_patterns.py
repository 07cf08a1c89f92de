"""A spec field's `pattern` is untrusted (issue 29): a catastrophic one such as `(a+)+$` is matched
in linear time wherever mcpsim checks text against it (agents' arguments, stored values,
the transcriber baseline), and a pattern that needs backtracking (look-around, backreferences) is
refused when the spec is read, naming the field. Each test fails on the code before unless its
docstring says it only guards."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from mcpsim.engine import Episode, TemplateCache
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._spec import SpecError, parse_spec

ROOT = Path(__file__).parents[2]
BOMB = "(a+)+$"
ARGUMENT = "a" * 40 + "!"


def with_pattern(pattern: str) -> dict:
    data = yaml.safe_load((ROOT / "examples" / "specs" / "bikes.yaml").read_text())
    data["entities"]["rider"]["fields"]["name"] |= {"pattern": pattern, "generator": {"choices": ["aaa", "aaaa"]}}
    data["actions"].append(
        {"name": "rename_rider", "kind": "update", "entity": "rider", "description": "Rename.", "inputs": ["name"]}
    )
    return data


def test_stored_values_and_the_transcriber_match_a_backtracking_pattern_in_linear_time():
    """`FieldSpec.problem` (validation's check of stored rows) and the transcriber searched with
    `re`: 2^40 steps on a 40-character text. Run in a child with a generous wall limit, since a
    backtracking match holds the interpreter lock."""
    code = f"""
        from mcpsim.audit._transcriber import _matches
        from mcpsim.specs._spec import FieldSpec

        field = FieldSpec(type="str", pattern={BOMB!r})
        print(field.problem({ARGUMENT!r}), _matches({BOMB!r}, {ARGUMENT!r}), field.problem("aaa"))
    """
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2_000:]
    assert done.stdout.strip() == f"'{ARGUMENT}' does not match {BOMB} False None"


def test_an_agents_argument_against_a_backtracking_pattern_is_refused_in_linear_time():
    """Only guards: pydantic checks `Field(pattern=)` with its Rust engine (no backtracking), the
    engine `mcpsim._patterns` uses everywhere else."""
    world = compile_spec(parse_spec(with_pattern(BOMB))).world
    episode = Episode.create(world, 0, "small", templates=TemplateCache(None))
    rider_id = episode.tables(["riders"])["riders"][0]["id"]
    refused = episode.call("rename_rider", {"rider_id": rider_id, "name": ARGUMENT})
    assert refused.is_error and f"should match pattern '{BOMB}'" in refused.error
    assert not episode.call("rename_rider", {"rider_id": rider_id, "name": "aaaaa"}).is_error


@pytest.mark.parametrize(
    ("pattern", "reason"),
    [
        ("^(?=a)(a+)+$", "look-around, including look-ahead and look-behind, is not supported"),
        (r"^(a)\1$", "backreferences are not supported"),
        ("(?:a{1000}){1000}", "Compiled regex exceeds size limit"),
    ],
)
def test_a_pattern_that_needs_backtracking_is_refused_when_the_spec_is_read(pattern, reason):
    """Before, `re.compile` accepted it and compiling the world failed with pydantic's SchemaError."""
    with pytest.raises(SpecError) as caught:
        parse_spec(with_pattern(pattern), source="hostile")
    message = str(caught.value)
    assert "entities.rider.fields.name" in message
    assert f"pattern {pattern!r} cannot be matched in linear time: {reason}" in message
