"""The simulated user over HTTP (`POST /episodes/{id}/user`, `Client.user_reply`): a harness
outside mcpsim's process runs a task's whole dialogue, and the user says what the in-process
scripted user (`mcpsim.runner._users.ScriptedUser`) says, for the same task and conversation."""

from __future__ import annotations

import json
import sys

import anyio
import pytest

from mcpsim.runner._users import ScriptedUser
from mcpsim.tasks import load_tasks
from mcpsim.tasks._dialogue import YES_REPLY, scripted_reply
from mcpsim.trajectories._records import Message, Usage
from tests.support.venvs import CLIENT

sys.path.insert(0, str(CLIENT))
from mcpsim_client import AsyncClient, Client, InvalidRequest

TASK = "add-address-make-default"  # its rubric wants the user's go-ahead before the write
LOOKUP = ("find_customer_by_email", {"email": "derek.smith@yahoo.com"})
ADDRESS = dict(line1="88 Harbor View Rd", line2="Apt 12", city="Traverse City", state="MI", zip="49684")
ADD = ("add_customer_address", {"customer_id": "cus_3673453", **ADDRESS, "make_default": True})
QUESTION = "I will add 88 Harbor View Rd, Apt 12, Traverse City, MI 49684 as your default address. Shall I go ahead?"
DONE = "Done: 88 Harbor View Rd, Apt 12 is now your default address."


def _tool(client: Client, episode, messages: list[dict], number: int, name: str, arguments: dict) -> None:
    call = {"id": f"c{number}", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
    messages.append({"role": "assistant", "tool_calls": [call]})
    content = client.call_tool(episode, name, arguments).as_message_content()
    messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": content})


def _dialogue(client: Client, ask: bool) -> tuple[list[str | None], float]:
    """Look the customer up, ask for the go-ahead (or not), write, answer; the user's replies
    and the strict reward."""
    replies: list[str | None] = []
    with client.episode("retail", task=TASK) as episode:
        messages: list[dict] = [{"role": "system", "content": client.policy(episode)}]
        messages.append(
            {"role": "user", "content": next(t for t in client.tasks("retail") if t.id == TASK).instruction}
        )
        _tool(client, episode, messages, 1, *LOOKUP)
        if ask:
            messages.append({"role": "assistant", "content": QUESTION})
            replies.append(client.user_reply(episode, messages))
            messages.append({"role": "user", "content": replies[-1]})
        _tool(client, episode, messages, 2, *ADD)
        messages.append({"role": "assistant", "content": DONE})
        replies.append(client.user_reply(episode, messages))
        again = client.user_reply(episode, messages)
        assert again == replies[-1]  # worked out from the conversation alone: the same twice
        verdict = client.verify(episode, answer=DONE, messages=messages)
        return replies, verdict.reward


@pytest.mark.system
def test_a_dialogue_runs_over_http_and_its_confirmation_counts(http_process: str) -> None:
    with Client(http_process, "tok") as client:
        replies, reward = _dialogue(client, ask=True)
        assert replies == [YES_REPLY, None] and reward == 1.0  # the user said yes, then had no more to say
        replies, reward = _dialogue(client, ask=False)
        assert replies == [None] and reward == 0.0  # the same write without asking fails `confirmed`


@pytest.mark.system
def test_the_async_client_asks_the_user_too(http_process: str) -> None:
    async def main() -> tuple[str | None, str | None]:
        async with AsyncClient(http_process, "tok") as client, client.episode("retail", task=TASK) as episode:
            opening = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": QUESTION}]
            return await client.user_reply(episode, opening), await client.user_reply(episode, opening[:1])

    assert anyio.run(main) == (YES_REPLY, None)


@pytest.mark.system
def test_the_route_refuses_what_it_cannot_answer(http_process: str) -> None:
    with Client(http_process, "tok") as client:
        with client.episode("retail") as plain, pytest.raises(InvalidRequest, match="not created for a task"):
            client.user_reply(plain, [{"role": "assistant", "content": "hi"}])
        with client.episode("retail", task=TASK) as episode:
            with pytest.raises(InvalidRequest, match="invalid user request"):
                client._send(client_request(episode.id, {"messages": "not a list"}))


def client_request(episode_id: str, body: dict):
    from mcpsim_client import _protocol as p

    return p.Request("POST", f"/episodes/{episode_id}/user", json=body, what="ask the user")


@pytest.mark.parametrize(
    "shape",
    [
        ["assistant:Shall I go ahead?"],  # a confirmation request: the scripted answer
        ["assistant:Shall I go ahead?", "user:yes", "assistant:Shall I go ahead?"],
        ["assistant:Should I refund $999.00 to card 4242?"],  # about what the user never asked: no
        ["assistant:Here is your balance."],  # an answer: the next scripted turn, or the end
        ["assistant:Here is your balance.", "user:turn", "assistant:Anything else?"],
        ["assistant:Confirm?", "user:y", "assistant:Confirm?", "user:y", "assistant:Confirm?", "user:y"]
        + ["assistant:Confirm?"],  # a fourth request in a row without acting: no more yeses
        ["tool:{}", "assistant:Shall I go ahead? (yes/no)"],
    ],
)
@pytest.mark.parametrize("turns", [[], ["Also, what is my balance?", "Thanks, that is all."]])
def test_the_route_says_what_the_in_process_user_says(shape: list[str], turns: list[str]) -> None:
    task = load_tasks("retail").get(TASK)
    task = task.model_copy(update={"user": task.user.model_copy(update={"turns": turns})})
    messages = [Message(role="system", content="policy"), Message(role="user", content=task.instruction)]
    for item in shape:
        role, _, content = item.partition(":")
        messages.append(
            Message(role="tool", tool_call_id="c", content=content)
            if role == "tool"
            else Message(role=role, content=content)  # type: ignore[arg-type]
        )
    expected = anyio.run(ScriptedUser(task).reply, messages, Usage())
    assert scripted_reply(task, [m.model_dump(exclude_none=True) for m in messages]) == expected
