"""Worlds from a description, against the fake OpenAI-compatible server (real HTTP on 127.0.0.1):
the spec's JSON Schema as the response format, a broken spec repaired with the validator's errors,
replies cached by content (the same replies give the same world, without asking again), and a
bounded number of rounds."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from mcpsim._sandbox import CompileLimits
from mcpsim.acceptance._describe import DescribeError, describe_world, prompt, repair_message
from mcpsim.cli import main
from mcpsim.engine._episode import Episode
from mcpsim.engine._templates import TemplateCache
from mcpsim.runner._llm import ChatClient
from mcpsim.specs._spec import WorldSpec, json_schema
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv
from tests.support.fake_openai import FakeModel, fake_openai

pytestmark = pytest.mark.anyio
MCPSIM = mcpsim_argv()

# what a model would answer for "a veterinary clinic's front desk": small, so validation is quick
GOOD: dict = {
    "name": "vet_desk",
    "title": "Veterinary front desk",
    "description": "The front desk of a small veterinary clinic and its patients.",
    "scales": {"default": {"pet": 20}, "small": {"pet": 8}},
    "entities": {
        "pet": {
            "id": {"prefix": "P", "digits": 6},
            "fields": {
                "name": {"type": "str", "generator": {"faker": "first_name"}, "searchable": True, "max_length": 40},
                "species": {
                    "type": "enum",
                    "values": ["cat", "dog", "rabbit"],
                    "generator": {"choices": ["cat", "dog", "rabbit"]},
                },
            },
        }
    },
    "actions": [
        {"name": "get_pet", "kind": "get", "entity": "pet", "description": "Look up a pet by its id."},
        {"name": "list_pets", "kind": "list", "entity": "pet", "filters": ["species"], "description": "List pets."},
        {
            "name": "add_pet",
            "kind": "create",
            "entity": "pet",
            "inputs": ["name", "species"],
            "description": "Register a pet.",
        },
    ],
    # no generated tasks: three tools give only one-call tasks, which a transcriber passes and the
    # generator drops (`not_trivial`); what this file tests is the description's round trip
    "generated_tasks": 0,
}
BROKEN = json.loads(json.dumps(GOOD))
del BROKEN["entities"]["pet"]["fields"]["species"]["values"]  # an enum without values
BROKEN["actions"][1]["filters"] = ["colour"]  # a field the entity does not have
DESCRIPTION = "a veterinary clinic's front desk"


def client(url: str) -> ChatClient:
    return ChatClient(model="fake", base_url=url, temperature=0, retries=0)


@pytest.fixture(scope="module")
def repaired(tmp_path_factory: pytest.TempPathFactory) -> tuple[FakeModel, object, Path]:
    """One run: a broken spec, then the repaired one, over real HTTP; replies cached."""
    import anyio

    cache = tmp_path_factory.mktemp("replies")
    model = FakeModel(script=[{"content": json.dumps(BROKEN)}, {"content": f"```json\n{json.dumps(GOOD)}\n```"}])

    async def run() -> object:
        with fake_openai(model) as url:
            chat = client(url)
            try:
                return await describe_world(DESCRIPTION, chat, cache_dir=cache, rounds=2, sandbox=CompileLimits())
            finally:
                await chat.aclose()

    return model, anyio.run(run), cache


def test_the_model_gets_the_schema_and_the_prompts(repaired):
    model, _, _ = repaired
    first = model.requests[0]
    assert first["model"] == "fake" and first["temperature"] == 0
    assert first["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "world_spec", "schema": json_schema(), "strict": False},
    }
    assert [m["role"] for m in first["messages"]] == ["system", "user"]
    assert first["messages"][0]["content"] == prompt("describe_system")
    assert DESCRIPTION in first["messages"][1]["content"]


def test_a_broken_spec_is_repaired_with_the_errors(repaired):
    model, found, _ = repaired
    assert len(model.requests) == 2
    repair = model.requests[1]["messages"]
    assert [m["role"] for m in repair] == ["system", "user", "assistant", "user"]
    assert repair[2]["content"] == json.dumps(BROKEN)  # the model sees its own answer
    feedback = repair[3]["content"]
    assert "does not follow the world spec" in feedback
    assert "entities.pet.fields.species: Value error, an enum field needs values" in feedback
    assert [(r.number, r.accepted, r.problem, r.cached) for r in found.rounds] == [
        (1, False, "spec", False),
        (2, True, None, False),
    ]
    assert found.report["accepted"] and found.spec == WorldSpec.model_validate(GOOD)  # fenced JSON is read too
    assert found.compiled.world.tools.keys() == {"get_pet", "list_pets", "add_pet"}


def test_the_same_replies_give_the_same_world_without_asking(repaired, tmp_path):
    _, found, cache = repaired
    assert len(list(cache.glob("*.json"))) == 2
    offline = FakeModel(then=lambda body: {"status": 400})  # any request would fail the run
    with fake_openai(offline) as url:
        done = subprocess.run(
            [
                *MCPSIM,
                "gen",
                "--describe",
                DESCRIPTION,
                "--model",
                "openai:fake",
                "--base-url",
                url,
                "--reply-cache",
                str(cache),
                "--rounds",
                "2",
                "--tasks",
                "0",
                "--out",
                str(tmp_path / "vet.yaml"),
            ],
            capture_output=True,
            text=True,
            env=CLEAN_ENV,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr
    assert offline.requests == []
    report = json.loads(done.stdout)
    assert [r["cached"] for r in report["rounds"]] == [True, True] and report["validation"]["accepted"]
    written = WorldSpec.model_validate(yaml.safe_load((tmp_path / "vet.yaml").read_text()))
    assert written.digest() == found.spec.digest()
    templates = TemplateCache(None)
    from mcpsim.specs._compiler import compile_spec

    hashes = {
        Episode.create(compile_spec(s).world, 0, "small", templates=templates).state_hash()
        for s in (written, found.spec)
    }
    assert len(hashes) == 1


async def test_the_rounds_are_bounded(tmp_path):
    model = FakeModel(then=lambda body: {"content": "I think a clinic needs pets."})
    with fake_openai(model) as url:
        chat = client(url)
        with pytest.raises(DescribeError, match="no world passed every check in 2 answers; the last one: not_json"):
            await describe_world(DESCRIPTION, chat, cache_dir=tmp_path, rounds=1)
        await chat.aclose()
    assert len(model.requests) == 2
    assert "Its answer was not a JSON object." in model.requests[1]["messages"][-1]["content"]


async def test_an_answer_past_the_sandbox_limits_is_sent_back_for_repair(tmp_path):
    """Each answer is validated in the sandbox (issue 29, item 2): one that goes past a limit is a
    problem like any other, told to the model, and never accepted."""
    model = FakeModel(then=lambda body: {"content": json.dumps(GOOD)})
    with fake_openai(model) as url:
        chat = client(url)
        with pytest.raises(DescribeError, match="the last one: limits: loading it took longer than") as refused:
            await describe_world(DESCRIPTION, chat, rounds=1, sandbox=CompileLimits(wall_seconds=0.001))
        await chat.aclose()
    assert [(r.accepted, r.problem) for r in refused.value.rounds] == [(False, "limits"), (False, "limits")]
    assert "Checking it went past a limit" in model.requests[1]["messages"][-1]["content"]


def test_the_cli_validates_each_answer_in_the_sandbox(tmp_path):
    model = FakeModel(then=lambda body: {"content": json.dumps(GOOD)})
    args = ["gen", "--describe", DESCRIPTION, "--out", str(tmp_path / "x.yaml"), "--rounds", "0", "--tasks", "0"]
    with fake_openai(model) as url:
        done = CliRunner().invoke(
            main,
            [*args, "--model", "openai:fake", "--base-url", url, "--reply-cache", str(tmp_path / "c")],
            env={"MCPSIM_COMPILE_TIMEOUT": "0.001"},
        )
    assert done.exit_code == 1, done.output
    assert json.loads(done.stdout)["rounds"][0]["problem"] == "limits"
    assert not (tmp_path / "x.yaml").exists()


def test_the_cli_refuses_what_it_cannot_use(tmp_path):
    base = ["gen", "--describe", DESCRIPTION, "--out", str(tmp_path / "x.yaml")]
    done = CliRunner().invoke(main, [*base, "--model", "gpt-4o"])
    assert done.exit_code == 2 and "give the model as openai:MODEL" in done.output
    model = FakeModel(then=lambda body: {"content": json.dumps(BROKEN)})
    with fake_openai(model) as url:
        done = CliRunner().invoke(
            main,
            [*base, "--model", "openai:fake", "--base-url", url, "--rounds", "0", "--reply-cache", str(tmp_path / "c")],
        )
    assert done.exit_code == 1 and "no world passed every check in 1 answers" in done.stderr
    assert json.loads(done.stdout)["rounds"][0]["problem"] == "spec"
    assert not (tmp_path / "x.yaml").exists()


def test_validation_errors_are_sent_back_by_check():
    message = repair_message("validation", ["precondition_violated: lend_book: no_copy_left was never violated"])
    assert "validation rejected the world" in message
    assert "- precondition_violated: lend_book: no_copy_left was never violated" in message
    assert "{errors}" not in message and "{problem}" not in message
