"""Simulated users: who speaks for the customer. The first message is always the task's
instruction; after each final answer of the agent, a user may say more or end the conversation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from mcpsim.runner._llm import ChatClient
from mcpsim.tasks import Task, scripted_reply
from mcpsim.trajectories import Message, Usage

STOP = "###STOP###"


class User(Protocol):
    async def reply(self, messages: list[Message], usage: Usage) -> str | None:
        """The user's next message after the agent's latest answer, or None to end."""
        ...

    async def aclose(self) -> None: ...


def user_turns(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.role == "user")


@dataclass
class ScriptedUser:
    """The task's scripted user (`mcpsim.tasks._dialogue.scripted_reply`, the rule the control
    plane's user route serves too): answers the agent's confirmation requests (yes to what it
    asked for, no to anything else, or the task's scripted answer); otherwise says the task's
    scripted `user.turns` one by one, then ends."""

    task: Task

    async def reply(self, messages: list[Message], usage: Usage) -> str | None:
        return scripted_reply(self.task, [m.model_dump(exclude_none=True) for m in messages])

    async def aclose(self) -> None:
        pass


@dataclass
class ServerUser:
    """The scripted user of a task only the server has (`mcpsim run W --server URL` without W
    here): the client holds the task's public listing, the server its hidden parts, so each
    reply is the server's (`POST /episodes/{id}/user`, the same `scripted_reply`). The runner
    binds `episode` (an HTTP backend's live episode) once the episode exists."""

    task: Task
    episode: Any = None

    async def reply(self, messages: list[Message], usage: Usage) -> str | None:
        if self.episode is None:
            raise RuntimeError("ServerUser.reply before the runner bound the episode")
        reply: str | None = await self.episode.user_reply([m.model_dump(exclude_none=True) for m in messages])
        return reply

    async def aclose(self) -> None:
        pass


@dataclass
class LlmUser:
    """A model plays the customer from the task's persona, knowledge and goal, and ends the
    conversation with ###STOP### once the goal is met or cannot be."""

    task: Task
    client: ChatClient
    max_turns: int = 10
    _system: str = field(init=False)

    def __post_init__(self) -> None:
        u = self.task.user
        known = "\n".join(f"- {k}: {v}" for k, v in u.knows.items()) or "- nothing beyond your request"
        self._system = (
            "You are a customer talking to a customer-service agent. Stay in character; answer only what "
            "you are asked, briefly; never invent facts you were not given.\n"
            f"Who you are: {u.persona or 'an ordinary customer'}\n"
            f"What you want: {u.wants or self.task.instruction}\n"
            f"What you know:\n{known}\n"
            f"You opened with: {self.task.instruction}\n"
            f"When your request is done, or the agent says it cannot be done, reply with {STOP} alone."
        )

    async def reply(self, messages: list[Message], usage: Usage) -> str | None:
        if user_turns(messages) >= self.max_turns:
            return None
        # From the user's side the roles swap: the agent's words are what it hears.
        seen = [Message(role="system", content=self._system)]
        for m in messages:
            if m.role == "user":
                seen.append(Message(role="assistant", content=m.content))
            elif m.role == "assistant" and m.content:
                seen.append(Message(role="user", content=m.content))
        answer = await self.client.complete(seen, None, usage, stop=None)
        text = (answer.content or "").strip()
        if not text or STOP in text:
            return None
        return text

    async def aclose(self) -> None:
        await self.client.aclose()
