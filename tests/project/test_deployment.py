"""What ships: the wheel's contents, the Docker files, the client configurations, the README."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest
import yaml

from mcpsim.cli import main
from mcpsim.cli._serving import serve

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    """The wheel `pip install .` builds, from a copy of the tracked files only: a stale build/
    folder in a working copy must not hide a missing module."""
    import shutil

    source, out = tmp_path_factory.mktemp("source"), tmp_path_factory.mktemp("wheel")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (path,) = out.glob("mcpsim-*.whl")
    return zipfile.ZipFile(path)


@pytest.mark.system
def test_a_plain_install_ships_the_library_every_world_and_their_data(wheel):
    names = set(wheel.namelist())
    assert {
        "mcpsim/cli/__init__.py",
        "mcpsim/engine/_episode.py",
        "mcpsim_worlds/retail/__init__.py",
        "mcpsim_worlds/retail/policy.md",
    } <= names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = wheel.read(entry_points).decode()
    assert "mcpsim = mcpsim.cli:main" in text and "retail = mcpsim_worlds.retail:world" in text
    for init in (ROOT / "mcpsim").rglob("__init__.py"):  # every subpackage ships, with every module
        for module in init.parent.glob("*.py"):
            assert module.relative_to(ROOT).as_posix() in names, module
    for world in (ROOT / "worlds").iterdir():  # every world folder is packaged and registered
        if (world / "__init__.py").exists():
            assert f"mcpsim_worlds/{world.name}/__init__.py" in names
            for data in [*world.glob("*.md"), *world.glob("tasks/*.yaml")]:
                assert f"mcpsim_worlds/{world.name}/{data.relative_to(world).as_posix()}" in names, data
            assert f"{world.name} = mcpsim_worlds.{world.name}:world" in text


def serve_args(command: list[str]) -> click.Context:
    assert command[:2] == ["mcpsim", "serve"]
    return serve.make_context("serve", list(command[2:]))


def test_the_compose_service_serves_http_on_all_interfaces_with_explicit_hosts_health_and_token():
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    svc = compose["services"]["mcpsim"]
    assert svc["build"] == "." and (ROOT / "Dockerfile").exists()
    params = serve_args(svc["command"]).params
    assert params["use_http"] and params["host"] == "0.0.0.0" and params["port"] == 8000
    env = svc["environment"]
    assert env["MCPSIM_TOKEN"].startswith("${MCPSIM_TOKEN")  # from the environment, never a literal
    assert "localhost:8000" in env["MCPSIM_ALLOWED_HOSTS"].split()
    assert all(o.startswith("http") for o in env["MCPSIM_ALLOWED_ORIGINS"].split())
    assert svc["ports"] == ["127.0.0.1:8000:8000"]
    check = " ".join(svc["healthcheck"]["test"])
    assert "http://127.0.0.1:8000/health" in check and svc["healthcheck"]["retries"] >= 1


def test_the_dockerfile_installs_the_package_and_serves_http():
    lines = (ROOT / "Dockerfile").read_text().splitlines()
    assert next(line for line in lines if line.startswith("FROM")).startswith("FROM python:3.11")
    assert any("pip install" in line and " ." in line for line in lines)
    cmd = json.loads(next(line for line in lines if line.startswith("CMD")).removeprefix("CMD").strip())
    assert serve_args(cmd).params["use_http"]


def test_the_client_configurations_launch_real_commands():
    stdio = json.loads((ROOT / "servers/claude_desktop_config.json").read_text())["mcpServers"]["mcpsim-retail"]
    assert stdio["command"] == "mcpsim" and not serve_args([stdio["command"], *stdio["args"]]).params["use_http"]
    http = json.loads((ROOT / "servers/http_client_config.json").read_text())["mcpServers"]["mcpsim-retail"]
    assert http["url"] == "http://127.0.0.1:8000/mcp"


def test_the_readme_quickstart_is_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quickstart", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.strip().splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    ci = (ROOT / ".ci/run").read_text()
    assert commands[1] in ci
    assert "mcpsim" in commands[0] and "pytest" in commands[1]
    for command in commands:
        shlex.split(command)  # well-formed shell


def test_every_cli_command_has_help():
    for name, command in main.commands.items():
        assert command.help, name
        for param in command.params:
            if isinstance(param, click.Option) and param.name not in ("as_json",):
                assert param.help, f"{name} {param.name}"


def test_a_world_that_fails_to_load_is_listed_with_its_error_and_the_others_still_show(monkeypatch):
    import json as _json
    from importlib.metadata import EntryPoint

    from click.testing import CliRunner

    import mcpsim.world._registry as registry

    real = registry.entry_points

    def with_broken(group: str):
        return [*real(group=group), EntryPoint("broken", "no_such_module:world", group)]

    monkeypatch.setattr(registry, "entry_points", with_broken)
    registry.load_world.cache_clear()
    result = CliRunner().invoke(main, ["worlds", "--json"])
    registry.load_world.cache_clear()
    assert result.exit_code == 1
    listed = {w["name"]: w for w in _json.loads(result.stdout)}
    assert "retail" in listed and "tools" in listed["retail"]
    assert "No module named 'no_such_module'" in listed["broken"]["error"]


def test_the_readme_is_short_and_leads_to_the_three_task_pages():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) < 150
    for page in ("docs/connect.md", "docs/evaluate.md", "docs/train.md", "docs/results.md"):
        assert f"]({page})" in readme, page
        assert (ROOT / page).is_file(), page
