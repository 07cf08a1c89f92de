"""What the control plane gives a runner that does not have the world (issue 35, item 4): the task
listing (`GET /worlds/{world}/tasks`) carries only what the agent may see, and the scripted user's
turns (`POST /episodes/{id}/user`) are worked out on the server, within bounded input."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from mcpsim._nested import leaves
from mcpsim.tasks import Task, load_tasks
from mcpsim.tasks._dialogue import YES_REPLY, scripted_reply
from mcpsim.world import load_world

HAND_BUILT = ("retail", "airline", "bank", "workspace")
PUBLIC = {"id", "split", "instruction", "persona", "tags", "difficulty", "dialogue"}
DIALOGUE_TASK = "add-address-make-default"  # retail: its rubric wants the user's go-ahead before the write


def _hidden(task: Task) -> set[str]:
    """The task's texts an agent must not be given (of 6 characters or more): its gold arguments,
    its answer and forbidden facts, its other solutions, and what its user knows, wants and says
    later."""
    dumped = task.model_dump(mode="json")
    parts = [action["args"] for action in dumped["gold"]] + [dumped["answer"], dumped["forbidden"]]
    parts += [step.get("args", step.get("say")) for s in dumped["alternatives"] for step in s["steps"] or []]
    parts += [dumped["user"][k] for k in ("knows", "wants", "turns", "confirmations")]
    return {v for part in parts for v in _texts(part) if len(v) >= 6}


def _texts(value: Any) -> list[str]:
    return [str(leaf) for leaf in leaves(value) if isinstance(leaf, str | int | float) and not isinstance(leaf, bool)]


def test_the_listing_of_every_hand_built_world_gives_nothing_away(serve_http) -> None:
    task_sets = {name: load_tasks(name) for name in HAND_BUILT}
    live = serve_http([load_world(name) for name in HAND_BUILT], tasks=task_sets)
    checked = 0
    for name, task_set in task_sets.items():
        response = httpx.get(f"{live.url}/worlds/{name}/tasks", timeout=120)
        assert response.status_code == 200, response.text
        listing = response.json()
        assert [t["id"] for t in listing] == [t.id for t in task_set.tasks]
        for canary in task_set.canaries:
            assert canary not in response.text
        for entry, task in zip(listing, task_set.tasks, strict=True):
            assert set(entry) == PUBLIC, entry
            assert (entry["instruction"], entry["persona"]) == (task.instruction, task.user.persona)
            # public by design: what the user says of themselves, and the task's name and tags
            public = "\n".join([task.instruction, task.user.persona, task.id, *task.tags])
            for secret in _hidden(task) - {s for s in _hidden(task) if s in public}:
                assert secret not in json.dumps(entry), (task.id, secret)
                checked += 1
    assert checked > 500  # the worlds' tasks hold many hidden values, each looked for


def _episode(http: httpx.Client, task: str) -> str:
    response = http.post("/episodes", json={"world": "retail", "task": task})
    assert response.status_code == 201, response.text
    return response.json()["id"]


@pytest.fixture
def retail_http(serve_http):
    live = serve_http([load_world("retail")], tasks={"retail": load_tasks("retail")})
    with httpx.Client(base_url=live.url, timeout=120) as http:
        yield http


def test_the_user_route_answers_as_the_scripted_user_of_the_episodes_task(retail_http: httpx.Client) -> None:
    task = load_tasks("retail").get(DIALOGUE_TASK)
    episode = _episode(retail_http, DIALOGUE_TASK)
    asked = [
        {"role": "user", "content": task.instruction},
        {"role": "assistant", "content": "I will add 88 Harbor View Rd as your default address. Shall I go ahead?"},
    ]
    answered = retail_http.post(f"/episodes/{episode}/user", json={"messages": asked})
    assert answered.json() == {"message": YES_REPLY, "done": False}
    assert scripted_reply(task, asked) == YES_REPLY  # what the runner's in-process user says too
    finished = retail_http.post(f"/episodes/{episode}/user", json={"messages": asked[:1]})
    assert finished.json() == {"message": None, "done": True}


def test_the_user_route_refuses_oversize_input_with_the_reason(retail_http: httpx.Client) -> None:
    episode = _episode(retail_http, DIALOGUE_TASK)
    route = f"/episodes/{episode}/user"
    big = retail_http.post(route, json={"messages": [{"role": "assistant", "content": "x" * 70_000}]})
    assert big.status_code == 413 and "larger than 65536 bytes" in big.json()["error"]
    many = retail_http.post(route, json={"messages": [{}] * 10_001})
    assert many.status_code == 422 and "invalid user request" in many.json()["error"]
    assert "at most 10000 items" in json.dumps(many.json()["details"])
    deep: Any = "x"
    for _ in range(40):
        deep = [deep]
    nested = retail_http.post(route, json={"messages": [{"content": deep}]})
    assert nested.status_code == 422 and "nested more than" in nested.json()["error"]
    ok = retail_http.post(route, json={"messages": [{"role": "assistant", "content": "Shall I go ahead?"}]})
    assert ok.status_code == 200  # the episode still answers after the refusals
