"""A twin lists its tools as the real server does: for every server CI twins, the real server is
listed over stdio (the raw JSON-RPC answer), its twin is built with `mcpsim gen --from-mcp` and
served with `mcpsim gen --serve`, and listed over stdio the same way; every tool's input and
output schema is the same JSON value in both (key order aside): `$schema`, `title`,
`additionalProperties`, `$defs`, descriptions, defaults and all."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from benchmarks import twins
from mcpsim.twins._drift import Listing, schema_drift
from mcpsim.twins._probe import ProbeLimits, ProbeResult, probe_server
from mcpsim.twins._twin_spec import load_twin
from tests.conftest import CLEAN_ENV
from tests.support.commands import mcpsim_argv

REQUIRED = os.environ.get("MCPSIM_THIRD_PARTY_SERVERS") == "required"
EVERYTHING = twins.NODE_BIN / "mcp-server-everything"  # .ci/run installs it beside the others
SERVERS = [*sorted(twins.SERVERS), "everything"]
LIMITS = ProbeLimits(cpu_s=300, wall_s=300.0, memory_bytes=8 * 1024**3)  # generous: a loaded 2-core machine


def _command(name: str, work: Path) -> tuple[list[str], dict[str, str]]:
    """The real server's command line and the environment it needs."""
    if name == "everything":
        if not EVERYTHING.exists():
            _missing(f"@modelcontextprotocol/server-everything is not installed at {EVERYTHING} (.ci/run installs it)")
        work.mkdir()
        return [str(EVERYTHING), "stdio"], {}
    server = twins.SERVERS[name]
    if not server.installed:
        _missing(f"{twins.PINS[name]} is not installed at {server.binary} (.ci/run installs it)")
    if name != "git":  # git's makes its repository there
        work.mkdir()
    server.prepare(work)
    return [str(server.binary), *server.args(work)], server.env(work)


def _missing(reason: str) -> None:
    if REQUIRED:
        pytest.fail(reason)
    pytest.skip(reason)


def _probe(command: list[str], env: dict[str, str], cwd: Path) -> ProbeResult:
    probe = probe_server(command, env={**CLEAN_ENV, **env}, cwd=cwd, limits=LIMITS, isolate=[])
    assert probe.failure is None, (probe.failure, probe.stderr)
    return probe


def _canonical(schema: object) -> str:
    return json.dumps(schema, sort_keys=True)


@pytest.mark.system
@pytest.mark.parametrize("name", SERVERS)
def test_the_twin_lists_every_schema_as_the_real_server_does(name, tmp_path):
    work = tmp_path / "work"
    command, env = _command(name, work)
    work.mkdir(exist_ok=True)
    probe = _probe(command, env, work)
    real = {tool["name"]: tool for tool in probe.tools}
    twin = tmp_path / f"{name}.twin.json"
    done = subprocess.run(
        [*mcpsim_argv("gen", "--from-mcp", "--out", str(twin), "--"), *command],
        capture_output=True,
        text=True,
        env={**CLEAN_ENV, **env},
        cwd=work,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["schemas_equal"] == report["output_schemas_equal"] == report["tools"] == len(real)

    served = {t["name"]: t for t in _probe(mcpsim_argv("gen", "--serve", str(twin)), {}, tmp_path).tools}
    assert sorted(served) == sorted(real)
    for tool, listed in real.items():
        assert _canonical(served[tool]["inputSchema"]) == _canonical(listed["inputSchema"]), tool
        assert _canonical(served[tool].get("outputSchema")) == _canonical(listed.get("outputSchema")), tool
    # the twin records the server's name and version, and a fresh listing of the server shows no drift
    spec = load_twin(twin)
    info = probe.server_info
    assert (spec.server["name"], spec.server["version"]) == (info["name"], info["version"])
    drift = schema_drift(spec, Listing(info["name"], info["version"], probe.tools))
    assert not drift["drifted"] and drift["unchanged"] == len(real), drift
    # what the twin fixed: the real listings have what the SDK would have dropped or added
    schemas = [t["inputSchema"] for t in real.values()]
    if name in ("memory", "filesystem"):  # zod's JSON Schema
        assert all("title" not in s for s in schemas)
        assert any(s.get("additionalProperties") is False or "$schema" in s for s in schemas)
    if name == "git":  # pydantic's: each schema titled by its model
        assert all("title" in s for s in schemas)


@pytest.mark.anyio
async def test_a_hand_built_world_lists_the_schemas_its_signatures_give():
    """Only twins list schemas verbatim: a world's own tools keep the SDK's schemas of their
    signatures (titled `...Arguments`, no `$schema`), as before."""
    import toyworld
    from mcp import Client

    from mcpsim.engine import Episode, TemplateCache
    from mcpsim.serve import build_server

    world = toyworld.world
    assert all(t.listed_input_schema is None and t.listed_output_schema is None for t in world.tools.values())
    episode = Episode.create(world, 0, "small", templates=TemplateCache(None))
    try:
        async with Client(build_server(world, lambda _id: episode)) as client:
            listed = (await client.list_tools()).tools
    finally:
        episode.close()
    assert listed and all(t.input_schema["title"].endswith("Arguments") for t in listed)
    assert all("$schema" not in t.input_schema for t in listed)
