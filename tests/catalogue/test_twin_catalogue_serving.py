"""The committed twin catalogue served like the world catalogue (issue 32, item 4): `mcpsim
serve-worlds` over `python -m mcpsim.twins build`'s DIR/worlds (a uvicorn subprocess, real HTTP,
the MCP SDK's client) serves each accepted twin under its world's name, lists its tools with the
real server's schemas, and grades a task from the task file written beside it; a folder naming
one world twice is refused before anything is served."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
import yaml
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from mcpsim.catalogue import spec_world_loader
from mcpsim.cli import main
from mcpsim.specs import SpecError
from tests.support.commands import serving_worlds

pytestmark = pytest.mark.system

CATALOGUE = Path(__file__).resolve().parents[2] / "benchmarks/harvest/twins/worlds"
MEMORY = CATALOGUE / "npm-modelcontextprotocol-server-memory.twin.json"
MEMORY_TASKS = CATALOGUE / "npm-modelcontextprotocol-server-memory.twin.tasks.yaml"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, dict[str, str]]]:
    folder = tmp_path_factory.mktemp("twins")
    for path in CATALOGUE.iterdir():
        shutil.copy(path, folder / path.name)
    # the memory twin's task file cut to its first task: what is served comes from the file, not from
    # the generator (which would make the file's five again, and more)
    written = yaml.safe_load(MEMORY_TASKS.read_text())
    cut = {**written, "tasks": written["tasks"][:1]}
    # keys in their written order: the memory twin stores an entity's JSON text as the call sent it,
    # so a gold replayed with its keys sorted would store other text than the agent's call
    (folder / MEMORY_TASKS.name).write_text(yaml.safe_dump(cut, sort_keys=False))
    with serving_worlds(folder, "--no-cache") as (url, token):
        yield url, {"Authorization": f"Bearer {token}"}


def test_each_accepted_twin_is_served_under_its_world_name(served):
    url, auth = served
    listed = httpx.get(f"{url}/worlds", headers=auth).json()
    names = sorted(json.loads(p.read_text())["name"] for p in CATALOGUE.glob("*.twin.json"))
    assert listed["worlds"] == names and len(names) == 3, listed
    assert listed["loaded"] == []


async def _listed_then_gold(mcp_url: str, gold: list[dict]) -> dict[str, dict]:
    async with (
        create_mcp_http_client() as http,
        Client(streamable_http_client(mcp_url, http_client=http), mode="legacy") as client,
    ):
        schemas = {t.name: t.input_schema for t in (await client.list_tools()).tools}
        for step in gold:
            done = await client.call_tool(step["tool"], step.get("args") or {})
            assert not done.is_error, done
        return schemas


def test_a_twin_episode_lists_the_real_schemas_and_grades_its_task_file(served):
    url, auth = served
    twin = json.loads(MEMORY.read_text())
    written = yaml.safe_load(MEMORY_TASKS.read_text())
    task, dropped = written["tasks"][0], written["tasks"][1]
    world = twin["name"]
    created = httpx.post(f"{url}/w/{world}/episodes", json={"world": world, "task": task["id"]}, headers=auth)
    assert created.status_code == 201, created.text
    schemas = anyio.run(_listed_then_gold, created.json()["mcp_url"], task["gold"])
    assert schemas == {t["name"]: t["input_schema"] for t in twin["tools"]}  # as the real server listed them
    episode = created.json()["id"]
    verdict = httpx.post(f"{url}/w/{world}/episodes/{episode}/verify", json={"answer": ""}, headers=auth)
    assert verdict.status_code == 200, verdict.text
    assert verdict.json()["passed"] is True, verdict.json()
    empty = httpx.post(f"{url}/w/{world}/episodes", json={"world": world, "task": task["id"]}, headers=auth)
    nothing = httpx.post(f"{url}/w/{world}/episodes/{empty.json()['id']}/verify", json={"answer": ""}, headers=auth)
    assert nothing.json()["passed"] is False  # doing nothing does not pass
    absent = httpx.post(f"{url}/w/{world}/episodes", json={"world": world, "task": dropped["id"]}, headers=auth)
    assert absent.status_code == 422 and f"unknown task {dropped['id']!r}" in absent.text, absent.text


def test_two_files_naming_one_world_are_refused(tmp_path):
    shutil.copy(MEMORY, tmp_path / MEMORY.name)
    shutil.copy(MEMORY, tmp_path / "copy.twin.json")
    with pytest.raises(SpecError, match="both hold world 'memory_server'"):
        spec_world_loader(tmp_path)
    refused = CliRunner().invoke(main, ["serve-worlds", str(tmp_path), "--no-auth", "--port", "0"])
    assert refused.exit_code == 2 and "both hold world 'memory_server'" in refused.output, refused.output


def test_a_twin_file_that_does_not_read_keeps_its_file_name_and_says_why_when_loaded(tmp_path):
    broken = tmp_path / "broken.twin.json"
    broken.write_text(json.dumps({"kind": "twin", "name": "Not A Name", "tools": "nope"}))
    names, load = spec_world_loader(tmp_path)
    assert names == ["broken.twin"]
    with pytest.raises(SpecError, match="not a twin spec"):
        load("broken.twin")
