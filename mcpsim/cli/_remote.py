"""`mcpsim run --server URL`: the world the server serves, checked against this client's copy
before any episode starts. With a copy (at the server's version) the client takes tasks, gold
actions and the simulated user from it; without one it takes the tasks' public listing from the
server (`GET /worlds/{world}/tasks`) and asks the server for the scripted user's turns. The server
always grades with its own."""

from __future__ import annotations

import json
import re
from typing import Any

import click

WORLDS_TIMEOUT = 60.0  # seconds for GET /worlds; a busy server may be building a template
MAX_SERVED_TASKS = 100_000  # tasks taken from one listing
MAX_LISTING_BYTES = 64 * 1024 * 1024  # a task listing's body read at most; a longer one is refused unread
TASK_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,80}$")  # `Task.id`'s pattern: ids name files under --out


def check_served_world(world: str, server_url: str, token: str | None) -> Any:
    """A usage error unless the server at `server_url` serves `world`, at this client's version
    if the client has it. None when the client's copy is to be used (or the server could not be
    asked: an unreachable server is left to the run, which reports it per episode as
    `server_error`); the server's task listing (a `TaskSet`) for a world only the server has."""
    import httpx

    from mcpsim.world import UnknownWorld, load_world

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        response = httpx.get(f"{server_url.rstrip('/')}/worlds", headers=headers, timeout=WORLDS_TIMEOUT)
    except httpx.HTTPError:
        return
    if response.status_code in (401, 403):
        raise click.UsageError(f"the server at {server_url} refused the control-plane token (--token, MCPSIM_TOKEN)")
    if response.status_code != 200:
        return  # not an mcpsim server's answer: the run says what goes wrong
    served = _versions(response.json())
    try:
        mine = load_world(world).version
    except UnknownWorld:
        mine = None
    if world not in served:
        known = ", ".join(sorted(served)) or "none"
        raise click.BadParameter(
            f"the server at {server_url} does not serve {world!r} (it serves: {known})", param_hint="WORLD"
        )
    if mine is None:
        return served_tasks(world, server_url, headers)
    if mine != served[world]:
        raise click.UsageError(
            f"world {world!r} differs: the server at {server_url} serves version {served[world][:12]}, this "
            f"client has version {mine[:12]}; its tasks and grading would not match (update one side, or "
            "load the server's spec here with --world-spec / --worlds-dir)"
        )
    return None


def served_tasks(world: str, server_url: str, headers: dict[str, str]) -> Any:
    """The tasks of `world` as the server lists them: id, split, instruction, the user's persona,
    tags and difficulty. The hidden parts (gold, rubric, what the user knows, scripted turns)
    stay on the server: these tasks carry none, so only the server grades them and speaks for
    their user. A listing that is not one is a usage error naming what is wrong."""
    import httpx

    from mcpsim.tasks import Task, TaskFile, TaskSet, UserSpec

    url = f"{server_url.rstrip('/')}/worlds/{world}/tasks"
    try:
        status, body = _bounded_get(url, headers)
        listed = json.loads(body) if status == 200 else None
    except (httpx.HTTPError, ValueError) as exc:
        raise click.UsageError(f"could not list the tasks of {world!r} at {url}: {exc}") from None
    if not isinstance(listed, list) or not 0 < len(listed) <= MAX_SERVED_TASKS:
        raise click.UsageError(
            f"the server at {server_url} lists no tasks of {world!r} (GET {url}: HTTP {status}, "
            f"{body[:200].decode(errors='replace')})"
        )
    tasks = []
    ids: set[str] = set()
    for item in listed:
        fields = _public_fields(item)
        if fields is None or fields["id"] in ids:  # an id names files under --out: each once
            raise click.UsageError(
                f"the server's task listing of {world!r} holds an entry that is not a task, or a task id twice: "
                f"{str(item)[:200]}"
            )
        ids.add(fields["id"])
        persona = fields.pop("persona")
        # unvalidated on purpose: no gold or rubric is here to validate (the server has them)
        tasks.append(Task.model_construct(**fields, user=UserSpec(persona=persona), gold=[], rubric=[]))
    return TaskSet.model_construct(world=world, files=[TaskFile.model_construct(world=world, canary="", tasks=tasks)])


def _bounded_get(url: str, headers: dict[str, str]) -> tuple[int, bytes]:
    """GET `url`: the status and the body, read as it streams in and refused (a ValueError) once
    it passes `MAX_LISTING_BYTES`, so a server cannot make the client hold an endless answer."""
    import httpx

    with httpx.stream("GET", url, headers=headers, timeout=WORLDS_TIMEOUT) as response:
        body = bytearray()
        for chunk in response.iter_bytes():
            body += chunk
            if len(body) > MAX_LISTING_BYTES:
                raise ValueError(f"the listing is longer than {MAX_LISTING_BYTES} bytes")
        return response.status_code, bytes(body)


def _public_fields(item: Any) -> dict[str, Any] | None:
    """A listed task's public fields, checked (its id names files, so it must be a task id), or None."""
    if not isinstance(item, dict) or not isinstance(item.get("id"), str) or not TASK_ID.fullmatch(item["id"]):
        return None
    split, difficulty = item.get("split"), item.get("difficulty", "medium")
    tags = item.get("tags", [])
    if split not in ("train", "dev", "test", "hard") or difficulty not in ("easy", "medium", "hard"):
        return None
    if not isinstance(item.get("instruction"), str) or not isinstance(tags, list):
        return None
    persona = item.get("persona", "")
    return {
        "id": item["id"],
        "split": split,
        "instruction": item["instruction"],
        "persona": persona if isinstance(persona, str) else "",
        "tags": [str(t) for t in tags],
        "difficulty": difficulty,
    }


def check_served_run(agent: Any, user_spec: str, tier: str | None, executor: str = "local") -> None:
    """A usage error for what a run of a world only the server has cannot do: an agent that
    reads the task's gold (the oracle), a model user (it needs what the user knows), --tier
    (measured by replaying the gold), Ray's executor (its workers load the world's tasks)."""
    if executor != "local":
        raise click.BadParameter(
            "a world only the server has runs on the local executor: its tasks come from the server's listing",
            param_hint="--executor",
        )
    if agent.needs_task:
        raise click.BadParameter(
            f"{agent.name} reads each task's gold solution, which only the server has (this client has no copy "
            "of the world): use another agent, or load the world's spec here with --world-spec / --worlds-dir",
            param_hint="--agent",
        )
    if user_spec != "scripted":
        raise click.BadParameter(
            "a model user needs what each task's user knows, which only the server has: leave --user scripted",
            param_hint="--user",
        )
    if tier is not None:
        raise click.BadParameter(
            "tiers are measured by replaying each task's gold solution, which only the server has", param_hint="--tier"
        )


def _versions(listed: Any) -> dict[str, str]:
    """World name -> version, from GET /worlds."""
    if not isinstance(listed, list):
        return {}
    return {w["name"]: str(w.get("version", "")) for w in listed if isinstance(w, dict) and "name" in w}
