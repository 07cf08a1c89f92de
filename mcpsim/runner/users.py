"""Simulated users: who speaks for the customer. The first message is always the task's
instruction; after each final answer of the agent, a user may say more or end the conversation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from mcpsim.runner.llm import ChatClient
from mcpsim.tasks import Task
from mcpsim.tasks.dialogue import confirmation_reply, is_confirmation_request
from mcpsim.trajectories.schema import Message, Usage

STOP = "###STOP###"


class User(Protocol):
    async def reply(self, messages: list[Message], usage: Usage) -> str | None:
        """The user's next message after the agent's latest answer, or None to end."""
        ...

    async def aclose(self) -> None: ...


def user_turns(messages: list[Message]) -> int:
    return sum(1 for m in messages if m.role == "user")


# An agent that keeps asking for the go-ahead without acting gets no more yeses after this many.
MAX_CONFIRMATIONS_IN_A_ROW = 3


def _last_text(messages: list[Message]) -> str | None:
    """The agent's latest words, if the agent's latest message has any."""
    for m in reversed(messages):
        if m.role == "assistant":
            return m.content or None
        if m.role in ("user", "tool"):
            return None
    return None


def _answers_confirmation(question: str | None, confirmed_in_a_row: int) -> bool:
    return (
        question is not None and is_confirmation_request(question) and confirmed_in_a_row < MAX_CONFIRMATIONS_IN_A_ROW
    )


def _replay(messages: list[Message]) -> tuple[int, int]:
    """How many scripted turns the user has said, and how many confirmation requests it has
    answered since the agent last called a tool. Worked out from the conversation alone (the
    same rule as `reply`), so a resumed rollout's user picks up where the first one stopped."""
    scripted = confirmed = 0
    seen_instruction = False
    previous: list[Message] = []
    for m in messages:
        if m.role == "user":
            if not seen_instruction:
                seen_instruction = True
            elif _answers_confirmation(_last_text(previous), confirmed):
                confirmed += 1
            else:
                scripted += 1
        elif m.role == "tool":
            confirmed = 0
        previous.append(m)
    return scripted, confirmed


@dataclass
class ScriptedUser:
    """Answers the agent's confirmation requests (`mcpsim.tasks.dialogue.confirmation_reply`: yes to
    what it asked for, no to anything else, or the task's scripted answer); otherwise says the
    task's scripted `user.turns` one by one, then ends. Answering a confirmation does not use up
    a scripted turn."""

    task: Task

    async def reply(self, messages: list[Message], usage: Usage) -> str | None:
        scripted, confirmed = _replay(messages)
        question = _last_text(messages)
        if _answers_confirmation(question, confirmed):
            assert question is not None
            return confirmation_reply(question, self.task, [m.model_dump(exclude_none=True) for m in messages])
        turns = self.task.user.turns
        return turns[scripted] if scripted < len(turns) else None

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
