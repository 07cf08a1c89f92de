"""Worlds loaded in a sandbox (issue 29, item 2): `WorldHost` (serve-worlds) loads each world in a
child process with CPU-time, memory and wall-clock limits first; a world that fails or goes past
a limit answers its own requests with the reason, and while one is loading the other worlds and
`/health` answer as usual."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from mcpsim._sandbox import CompileLimits
from mcpsim.catalogue._blueprints import blueprints, expand
from mcpsim.serve._app import serve_in_thread
from mcpsim.serve._worlds import WorldHost
from tests.conftest import CLEAN_ENV, free_port, wait_until_healthy
from tests.support.hostile_loader import HostileLoader

pytestmark = pytest.mark.system

NAMES = ["good", "held", "stuck", "spin", "hog", "other"]
GiB = 1024**3


def wait_for(path: Path, what: str) -> None:
    for _ in range(1200):  # polled, bounded to about 2 minutes
        if path.exists():
            return
        time.sleep(0.1)
    pytest.fail(f"{what} never happened")


def test_a_world_that_loads_slowly_blocks_neither_the_others_nor_health(tmp_path, templates):
    host = WorldHost(
        NAMES,
        HostileLoader(str(tmp_path)),
        templates=templates,
        no_auth=True,
        sandbox=CompileLimits(cpu_seconds=60, memory_bytes=2 * GiB, wall_seconds=300),
    )
    with serve_in_thread(host.app) as url, httpx.Client(base_url=url, timeout=300) as http:
        held: list[httpx.Response] = []
        thread = threading.Thread(target=lambda: held.append(http.post("/w/held/episodes", json={})))
        thread.start()
        wait_for(tmp_path / "held.started", "the held world's loading")  # in its sandbox now
        assert http.get("/health").status_code == 200
        for name in ("good", "other"):  # each loads (in its own sandbox) while `held` is loading
            created = http.post(f"/w/{name}/episodes", json={"world": "ledger", "scale": "small"})
            assert created.status_code == 201, created.text
        listed = http.get("/worlds").json()
        assert listed["loaded"] == ["good", "other"] and listed["loading"] == ["held"]
        assert thread.is_alive() and not held  # still loading all along
        (tmp_path / "release").touch()
        thread.join(timeout=300)
        [refused] = held
        assert refused.status_code == 422
        reason = refused.json()["error"]
        assert reason.startswith("world 'held' cannot be served: ValueError") and "no primary key" in reason
        again = http.post("/w/held/episodes", json={})  # remembered: no second sandbox run
        assert again.status_code == 422 and again.json()["error"] == reason
        assert http.get("/worlds").json()["failed"] == {"held": reason.removeprefix("world 'held' cannot be served: ")}
        assert http.post("/w/good/episodes", json={"world": "ledger"}).status_code == 201


@pytest.mark.parametrize(
    ("name", "limits", "reason"),
    [
        ("stuck", CompileLimits(cpu_seconds=60, memory_bytes=2 * GiB, wall_seconds=5), "wall-clock limit of 5 s"),
        ("spin", CompileLimits(cpu_seconds=5, memory_bytes=2 * GiB, wall_seconds=300), "CPU-time limit of 5 s"),
        ("hog", CompileLimits(cpu_seconds=60, memory_bytes=2 * GiB, wall_seconds=300), "memory limit of 2.0 GiB"),
    ],
)
def test_a_world_past_a_sandbox_limit_answers_with_the_limit(tmp_path, templates, name, limits, reason):
    host = WorldHost(NAMES, HostileLoader(str(tmp_path)), templates=templates, no_auth=True, sandbox=limits)
    with serve_in_thread(host.app) as url, httpx.Client(base_url=url, timeout=300) as http:
        answer = http.post(f"/w/{name}/episodes", json={})
        assert answer.status_code == 422, answer.text
        assert reason in answer.json()["error"], answer.json()
        assert http.get("/health").status_code == 200
        assert not host.loaded  # the server never ran the hostile loader itself


def test_a_loader_that_cannot_go_to_a_sandbox_is_refused_up_front(templates):
    with pytest.raises(ValueError, match="picklable"):
        WorldHost(["x"], lambda name: None, templates=templates, no_auth=True, sandbox=CompileLimits())  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="wall_seconds"):
        CompileLimits(wall_seconds=0)


def test_serve_worlds_loads_specs_in_the_sandbox_and_a_broken_one_answers_why(tmp_path):
    """`mcpsim serve-worlds DIR` as a process: its spec-folder loader goes to the sandbox."""
    spec = expand(blueprints()["hotel"], 1, name="hotel").model_copy(update={"generated_tasks": 0})
    (tmp_path / "hotel.yaml").write_text(yaml.safe_dump(spec.model_dump(mode="json")))
    broken = spec.model_dump(mode="json") | {"name": "broken"}
    broken["entities"] = [{"name": "thing", "fields": "not a list"}]
    (tmp_path / "broken.yaml").write_text(yaml.safe_dump(broken))
    port, log = free_port(), tmp_path / "server.log"
    argv = [sys.executable, "-m", "mcpsim", "serve-worlds", str(tmp_path), "--port", str(port), "--no-auth"]
    argv += ["--no-cache", "--compile-timeout", "120", "--compile-cpu-seconds", "60"]
    with log.open("wb") as err:
        proc = subprocess.Popen(argv, env=CLEAN_ENV, stdout=subprocess.DEVNULL, stderr=err)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_until_healthy(url, proc, log)
            with httpx.Client(base_url=url, timeout=300) as http:
                refused = http.post("/w/broken/episodes", json={})
                assert refused.status_code == 422, refused.text
                assert refused.json()["error"].startswith("world 'broken' cannot be served:")
                created = http.post("/w/hotel/episodes", json={"world": "hotel", "scale": "small"})
                assert created.status_code == 201, created.text
        finally:
            proc.terminate()
            proc.wait(timeout=60)
