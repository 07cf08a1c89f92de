"""Hostile specs (issue 29): a spec is untrusted data, so each attack below is refused with a precise
error naming the limit or the rule and the place in the spec, after bounded work, or compiles within
its bounds; and every shipped spec stays well within every bound."""

from __future__ import annotations

import copy
import json
import random
import re
from pathlib import Path

import pytest
import yaml

from mcpsim.acceptance._describe import check_reply
from mcpsim.acceptance._validate import validate
from mcpsim.catalogue._blueprints import catalogue_specs
from mcpsim.engine import Episode, TemplateCache
from mcpsim.specs import _limits as lim
from mcpsim.specs._compiler import compile_spec
from mcpsim.specs._operands import PLACEHOLDER, message_pattern
from mcpsim.specs._spec import SpecError, load_spec, parse_spec

ROOT = Path(__file__).parents[2]
BIKES = ROOT / "examples" / "specs" / "bikes.yaml"


def bikes() -> dict:
    return yaml.safe_load(BIKES.read_text())


def refused(data: dict | str, *, source: str = "hostile") -> str:
    with pytest.raises(SpecError) as caught:
        parse_spec(data, source=source)
    return str(caught.value)


def nested(depth: int) -> object:
    value: object = "bottom"
    for _ in range(depth):
        value = [value]
    return value


# -- the loader: aliases, nesting, size ----------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_at_its_first_anchor():
    """Nine levels of ten aliases each: a few hundred bytes that expand to 10^9 strings."""
    lines = ['a0: &a0 "boom"'] + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]
    text = "name: bomb\ntitle: t\ndescription: d\n" + "\n".join(lines) + "\n"
    assert len(text) < 600
    message = refused(text, source="bomb.yaml")
    assert message == "bomb.yaml: a0 (line 4): YAML anchors and aliases are not allowed"


def test_a_merge_key_is_an_alias_too(tmp_path):
    path = tmp_path / "merge.yaml"
    path.write_text("base: &base {type: str}\nname: x\nother: {<<: *base}\n")
    with pytest.raises(SpecError, match="anchors and aliases are not allowed"):
        load_spec(path)


def test_deep_nesting_is_refused_with_the_limit_and_the_place_never_a_recursion_error():
    text = "name: deep\ndescription: " + "[" * 50_000 + "]" * 50_000 + "\n"
    message = refused(text)
    assert "hostile: description[0][0][0]" in message
    assert f"nested too deeply, the limit is {lim.MAX_DEPTH} (MAX_DEPTH)" in message
    data = bikes() | {"description": nested(100_000)}  # data already read: walked without recursion
    assert f"the limit is {lim.MAX_DEPTH} (MAX_DEPTH)" in refused(data)


def test_a_models_deeply_nested_answer_is_a_clear_error():
    """`gen --describe`: a model's answer within Python's nesting (refused by the spec's limit)
    or past it (refused as unreadable), never a RecursionError."""
    answer = json.dumps(bikes() | {"description": nested(200)})
    attempt = check_reply(answer, seed=0, scale="small")
    assert attempt.problem == "spec" and "(MAX_DEPTH)" in attempt.errors[0]
    attempt = check_reply('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}", seed=0, scale="small")
    assert attempt.problem == "not_json" and "nested too deeply" in attempt.errors[0]


def test_size_strings_and_values_are_capped(tmp_path):
    big = tmp_path / "big.yaml"
    big.write_text("name: big\ndescription: " + "x" * (lim.MAX_SPEC_BYTES + 10) + "\n")
    expected = r"big.yaml: the spec: 1,000,\d+ bytes, the limit is 1,000,000 \(MAX_SPEC_BYTES\)"
    with pytest.raises(SpecError, match=expected):
        load_spec(big)
    long = bikes() | {"title": "x" * (lim.MAX_STRING + 1)}
    assert "title: a string of 10,001 characters, the limit is 10,000 (MAX_STRING)" in refused(long)
    many = bikes() | {"description": ["word"] * lim.MAX_NODES}
    assert "too many values, the limit is 50,000 (MAX_NODES)" in refused(many)
    text = "name: many\ndescription: [" + ", ".join(["w"] * (lim.MAX_NODES + 5)) + "]\n"
    assert "too many values, the limit is 50,000 (MAX_NODES)" in refused(text)


# -- counts ---------------------------------------------------------------------------------------


def test_too_many_fields_entities_actions_and_rows_are_named():
    data = bikes()
    data["entities"]["bike"]["fields"] |= {f"f{i}": {"type": "int", "default": 0} for i in range(810)}
    assert "hostile: entities.bike.fields: 812 fields, the limit is 200 (MAX_FIELDS)" in refused(data)
    data = bikes()
    data["entities"] |= {f"e{i}": {"id": {"prefix": "E", "digits": 4}, "fields": {}} for i in range(60)}
    assert "entities: 63 entities, the limit is 50 (MAX_ENTITIES)" in refused(data)
    data = bikes()
    data["actions"] *= 100
    assert "actions: 700 actions, the limit is 500 (MAX_ACTIONS)" in refused(data)
    data = bikes()
    data["actions"][4]["preconditions"] *= 60
    assert "actions[4]: 62 preconditions and effects, the limit is 50 (MAX_RULES)" in refused(data)
    data = bikes()
    data["scales"]["default"]["rider"] = 10**9
    assert "scales.default.rider: 1,000,000,000 rows, the limit is 100,000 (MAX_ROWS)" in refused(data)


def test_a_huge_enum_is_refused_by_its_cap_before_anything_reads_it():
    data = bikes()
    values = [f"v{i}" for i in range(200_000)]
    data["entities"]["bike"]["fields"]["dock"] = {"type": "enum", "values": values, "generator": {"choices": values}}
    message = refused(data)
    assert "entities.bike.fields.dock.values: 200,000 values, the limit is 500 (MAX_ENUM_VALUES)" in message


# -- refusal messages: adjacent placeholders, no backtracking -------------------------------------


def test_adjacent_placeholders_are_refused_at_lint_time():
    data = bikes()
    data["actions"][4]["preconditions"][0]["message"] = "Bike {bike.id}{bike.status} cannot be rented"
    message = refused(data)
    assert "action start_rental.bike_not_available.message: placeholders {bike.id} and {bike.status} are adjacent" in (
        message
    )
    data = bikes()
    data["invariants"][0]["message"] = "{row.id}{row.id} is short"
    assert "invariant insufficient_credit.message: placeholders {row.id} and {row.id} are adjacent" in refused(data)


def _regex(message: str) -> re.Pattern[str]:
    """How refusals were matched before: a regex that backtracks polynomially (exponent: the
    placeholders) on a text that almost matches."""
    parts = PLACEHOLDER.split(message)
    return re.compile("^" + "".join(re.escape(p) if i % 2 == 0 else ".*?" for i, p in enumerate(parts)) + "$", re.S)


def test_a_message_with_nine_placeholders_is_matched_in_linear_work():
    """Nine placeholders, adjacent or a space apart, against texts of 100,000 characters that
    almost match: at most one `str.find` per literal part (the regex this replaces needed about
    n^9 steps here). The work is bounded by construction: the parts are all the matcher holds."""
    for message in ("Refused:" + " ".join(["{row.id}"] * 9) + "!", "{a.b}" * 9 + "!"):
        pattern = message_pattern(message)
        assert len(pattern.parts) == 10  # nine placeholders: ten literal parts, one search each
        assert not pattern.match("Refused:" + " " * 100_000)
        assert pattern.match("Refused:" + " x" * 50_000 + "!")
    assert message_pattern("{a.b}" * 9 + "!").match("z" * 100_000 + "!")


def test_the_matcher_agrees_with_the_regex_it_replaces():
    rng = random.Random(29)
    for _ in range(20_000):
        message = "".join(rng.choice(["a", "b", " ", "{x.y}", "ab", "\n", "."]) for _ in range(rng.randint(0, 6)))
        text = "".join(rng.choice("ab .\n") for _ in range(rng.randint(0, 9)))
        assert bool(_regex(message).match(text)) == message_pattern(message).match(text), (message, text)


# -- Faker ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("generator", "expected"),
    [
        ({"faker": "binary", "args": {"length": 10**10}}, "'binary' is not an allowed Faker provider"),
        ({"faker": "paragraph", "args": {"nb_sentences": 10**9}}, "paragraph(nb_sentences=...): 1e+09 is outside"),
        ({"faker": "add_provider", "args": {"provider": "os"}}, "'add_provider' is not an allowed Faker provider"),
        ({"faker": "seed_instance", "args": {"seed": 1}}, "'seed_instance' is not an allowed Faker provider"),
        ({"faker": "_Faker__config"}, "'_Faker__config' is not an allowed Faker provider"),
        ({"faker": "pystr", "args": {"max_chars": 10**8}}, "pystr(max_chars=...): 1e+08 is outside the limit"),
        ({"faker": "sentence", "args": {"ext_word_list": ["a"]}}, "sentence takes no argument 'ext_word_list'"),
        ({"faker": "sentence", "args": {"nb_words": "many"}}, "sentence(nb_words=...): 'many' is not a whole number"),
    ],
)
def test_faker_generators_come_from_an_allow_list_with_bounded_arguments(generator, expected):
    data = bikes()
    data["entities"]["rider"]["fields"]["name"]["generator"] = generator
    message = refused(data)
    assert "hostile: entities.rider.fields.name.generator: " in message and expected in message


def test_a_generator_that_raises_while_seeding_is_a_validation_error_with_the_fields_path():
    data = bikes()
    backwards = {"faker": "pystr", "args": {"min_chars": 50, "max_chars": 5}}  # each bound allowed, not together
    data["entities"]["rider"]["fields"]["name"]["generator"] = backwards
    compiled = compile_spec(parse_spec(data))
    with pytest.raises(SpecError, match=r"^entities\.rider\.fields\.name\.generator: \w+Error: Maximum length"):
        Episode.create(compiled.world, 0, "small", templates=TemplateCache(None))
    report = validate(compiled, processes=False, task_count=0)
    assert not report.ok and report.failures["seed_constraints"][0].startswith("entities.rider.fields.name.generator:")
    data = bikes()
    data["entities"]["rider"]["fields"]["credit"]["generator"] = {"faker": "name"}  # no number
    compiled = compile_spec(parse_spec(data))
    with pytest.raises(SpecError, match=r"^entities\.rider\.fields\.credit\.generator: ValueError: invalid literal"):
        Episode.create(compiled.world, 0, "small", templates=TemplateCache(None))


# -- names and words ---------------------------------------------------------------------------------


def test_invisible_and_bidirectional_characters_are_refused():
    data = bikes()
    data["entities"]["bike"]["label"] = "Bike\u202e"  # right-to-left override
    assert "entities.bike.label: the bidirectional control character U+202E" in refused(data)
    data = bikes()
    values = ["harbour", "stat\u200bion", "park"]  # a zero-width space
    data["entities"]["bike"]["fields"]["dock"] |= {"values": values, "generator": {"choices": values}}
    assert "entity bike.dock.values: 'stat\\u200bion' holds the invisible or control character U+200B" in refused(data)


def test_lookalike_names_are_refused():
    data = bikes()
    values = ["harbour", "station", "p\u0430rk", "park"]  # Cyrillic a
    data["entities"]["bike"]["fields"]["dock"] |= {"values": values, "generator": {"choices": values}}
    assert "entity bike.dock.values: 'p\u0430rk' and 'park' look alike but differ" in refused(data)
    data = bikes()
    data["entities"]["bike"]["label"] = "R\u0456der"  # Cyrillic i: the rider's label, to the eye
    assert "entity labels: 'Rider' and 'R\u0456der' look alike but differ" in refused(data)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["entities"]["bike"].update(table="riders"), "entity bike: table 'riders' is entity rider's table"),
        (lambda d: d["entities"]["bike"].update(table="sqlite_x"), "SQLite keeps names starting sqlite_ for itself"),
        (
            lambda d: d["entities"]["bike"]["fields"].update({"from": {"type": "str", "optional": True}}),
            "entity bike.from: 'from' is a Python keyword",
        ),
        (
            lambda d: d["entities"]["bike"]["fields"].update({"model_config": {"type": "str", "optional": True}}),
            "entity bike.model_config: names starting model_ are pydantic's own",
        ),
        (
            lambda d: (
                d["entities"]["bike"]["fields"].update({"limit": {"type": "int", "optional": True}}),
                d["actions"][2]["filters"].append("limit"),
            ),
            "action list_bikes: a filter cannot be named 'limit'",
        ),
    ],
)
def test_names_that_would_break_the_compiler_are_refused(edit, expected):
    data = bikes()
    edit(data)
    assert expected in refused(data)


def test_sql_keywords_are_names_like_any_other():
    """A table and fields named `select`, `order`, `group` compile, seed and serve (every
    identifier is quoted)."""
    data = bikes()
    data["entities"]["order"] = {
        "id": {"prefix": "O", "digits": 4},
        "table": "select",
        "fields": {
            "group": {"type": "enum", "values": ["a", "b"], "generator": {"choices": ["a", "b"]}},
            "select": {"type": "str", "max_length": 20, "generator": {"faker": "word"}},
        },
    }
    data["scales"]["small"]["order"] = 4
    data["scales"]["default"]["order"] = 4
    data["actions"] += [
        {"name": "list_orders", "kind": "list", "entity": "order", "filters": ["group"], "description": "List."},
        {"name": "add_order", "kind": "create", "entity": "order", "inputs": ["group", "select"], "description": "Ad."},
    ]
    compiled = compile_spec(parse_spec(data))
    episode = Episode.create(compiled.world, 0, "small", templates=TemplateCache(None))
    try:
        assert episode.call("list_orders", {"group": "a"}).error is None
        made = episode.call("add_order", {"group": "b", "select": "drop table"})
        assert made.error is None
        assert episode.query('SELECT count(*) AS n FROM "select"')[0]["n"] == 5
    finally:
        episode.close()


def test_cyclic_references_are_refused():
    data = bikes()
    data["entities"]["rider"]["fields"]["rental_id"] = {"type": "ref", "entity": "rental"}
    assert "references form a cycle among ['rental', 'rider']" in refused(data)


# -- every shipped spec is well within every bound --------------------------------------------------


def _sizes(data: dict) -> dict[str, int]:
    nodes, depth, longest, stack = 0, 0, 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        nodes, depth = nodes + 1, max(depth, level)
        if isinstance(value, str):
            longest = max(longest, len(value))
        children = list(value.values()) if isinstance(value, dict) else value if isinstance(value, list) else []
        stack += [(child, level + 1) for child in children]
    entities = data["entities"].values()
    return {
        "MAX_NODES": nodes,
        "MAX_DEPTH": depth,
        "MAX_STRING": longest,
        "MAX_ENTITIES": len(data["entities"]),
        "MAX_FIELDS": max(len(e["fields"]) for e in entities),
        "MAX_ENUM_VALUES": max(len(f.get("values") or []) for e in entities for f in e["fields"].values()),
        "MAX_ACTIONS": len(data["actions"]),
        "MAX_ROWS": max(n for counts in data["scales"].values() for n in counts.values()),
    }


def test_every_shipped_spec_is_well_within_every_bound():
    shipped = [yaml.safe_load(p.read_text()) for p in sorted((ROOT / "examples" / "specs").glob("*.yaml"))]
    expanded = [spec for _, _, _, spec in catalogue_specs(24, 0)]
    shipped += [spec.model_dump(mode="json") for spec in expanded if not isinstance(spec, Exception)]
    assert len(shipped) >= 20
    for data in shipped:
        for limit, size in _sizes(copy.deepcopy(data)).items():
            assert size * 4 <= getattr(lim, limit), (data["name"], limit, size)
