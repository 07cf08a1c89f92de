"""The user of a task only the server has (`ServerUser`, issue 35 item 4): a run of such tasks
asks the episode's server for every scripted turn, and a server that fails to answer ends the
episode as a `server_error`, not as the agent's error."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpsim.runner._agents import NoopAgent
from mcpsim.runner._backends import BackendError
from mcpsim.runner._run import Job, run_episode
from mcpsim.runner._settings import RolloutSettings, RunConfig
from mcpsim.runner._users import ScriptedUser, ServerUser
from mcpsim.tasks import load_tasks

SERVER = "http://127.0.0.1:9"


@dataclass
class _Live:
    """An episode whose server answers the user's turns from `said` (raising an error in it)."""

    said: list[Any]
    asked: list[list[dict[str, Any]]] = field(default_factory=list)
    id: str = "ep"

    async def policy(self) -> str:
        return "Be helpful."

    async def list_tools(self) -> list[Any]:
        return []

    async def user_reply(self, conversation: list[dict[str, Any]]) -> str | None:
        self.asked.append(conversation)
        reply = self.said.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    async def suspend(self) -> bytes:
        return b""


@dataclass
class _Backend:
    live: _Live
    name: str = "fake"

    @asynccontextmanager
    async def episode(self, world: str, task: Any, snapshot: Any, faults: Any = None) -> AsyncIterator[_Live]:
        yield self.live


def _config(tmp_path: Path, **extra: Any) -> RunConfig:
    task = load_tasks("retail").tasks[0]
    return RunConfig(world="retail", tasks=[task], out=tmp_path, agent="noop", server_url=SERVER, **extra)


def test_served_tasks_get_the_servers_user_and_need_a_server(tmp_path: Path) -> None:
    config = _config(tmp_path, served_tasks=True)
    assert isinstance(config.make_user(config.tasks[0]), ServerUser)
    assert isinstance(_config(tmp_path).make_user(config.tasks[0]), ScriptedUser)
    with pytest.raises(ValueError, match="only the server has"):
        _config(tmp_path, served_tasks=True, user="openai:m").make_user(config.tasks[0])
    with pytest.raises(ValueError, match="served_tasks"):
        RunConfig(world="retail", tasks=config.tasks, out=tmp_path, served_tasks=True)


def _episode(config: RunConfig, live: _Live) -> Any:
    job = Job(config.tasks[0], 0, None, RolloutSettings(max_steps=5, timeout=60))
    user = config.make_user(job.task)

    async def main() -> Any:
        return await run_episode(config, job, _Backend(live), NoopAgent(), user, anyio.Event())

    return anyio.run(main)


def test_a_failing_user_turn_is_the_servers_failure(tmp_path: Path) -> None:
    config = _config(tmp_path, served_tasks=True)
    live = _Live([BackendError("POST /episodes/ep/user: HTTP 500: boom")])
    trajectory, snapshot = _episode(config, live)
    assert snapshot is None and trajectory.termination == "server_error", trajectory
    assert "HTTP 500: boom" in (trajectory.error or "")
    assert live.asked and live.asked[0][-1] == {"role": "assistant", "content": ""}  # asked after the agent spoke
