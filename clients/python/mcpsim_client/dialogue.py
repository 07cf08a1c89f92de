"""One episode's conversation as the adapters hold it: the OpenAI-style messages, the tool calls
run over MCP, the simulated user asked (`POST /episodes/{id}/user`) after each answer of the
agent's, and the verdict at the end. Blocking: OpenEnv, TRL and SkyRL call environments
synchronously. Where a trainer's rollout ends at the agent's first answer (TRL), the user is
reached through a tool instead, `send_message_to_user` (`USER_TOOL`): its result is the reply."""

from __future__ import annotations

import json
from typing import Any

import httpx

from mcpsim_client.client import Client
from mcpsim_client.errors import MCPSimError
from mcpsim_client.models import Ending, EpisodeInfo, ToolResult, Verdict

USER_TOOL = "send_message_to_user"
USER_TOOL_DESCRIPTION = (
    "Send a message to the user (a question, or a request for the go-ahead before a change) and "
    "get the user's reply. Your final answer is your last message without a tool call."
)
NO_REPLY = "(the user has nothing more to say: give your final answer)"


def user_tool() -> dict[str, Any]:
    """`USER_TOOL` as an OpenAI function tool."""
    parameters = {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "What to say to the user"}},
        "required": ["message"],
    }
    return {
        "type": "function",
        "function": {"name": USER_TOOL, "description": USER_TOOL_DESCRIPTION, "parameters": parameters},
    }


def ending_of(error: BaseException) -> Ending | None:
    """How a failed request to the server ends an episode: `timeout` when it timed out, `error`
    for any other failure of the client's; None for an exception that is no failure of the
    server's (a bug of the caller's, to be raised)."""
    if not isinstance(error, MCPSimError):
        return None
    cause = error.__cause__
    return "timeout" if isinstance(cause, httpx.TimeoutException) else "error"


class Dialogue:
    """`messages` starts with the policy (system) and the user's request; `tool_call` and
    `answer` add the agent's turns and what came back, `verify` grades the episode on them."""

    def __init__(self, client: Client, episode: EpisodeInfo, instruction: str, *, policy: str | None = None) -> None:
        """`policy`: the world's, when the caller has it already (else asked of the episode)."""
        self.client, self.episode = client, episode
        self.policy = client.policy(episode) if policy is None else policy
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": self.policy},
            {"role": "user", "content": instruction},
        ]

    def tool_call(self, call_id: str, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Run the agent's call of `name` on the episode; its message and the result's are kept."""
        function = {"name": name, "arguments": json.dumps(arguments)}
        self.messages.append(
            {"role": "assistant", "tool_calls": [{"id": call_id, "type": "function", "function": function}]}
        )
        result = self.client.call_tool(self.episode, name, arguments)
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": result.as_message_content()})
        return result

    def answer(self, text: str) -> str | None:
        """The agent says `text` to the user: the user's reply (kept), or None when the user has
        nothing more to say and the conversation is over."""
        self.messages.append({"role": "assistant", "content": text})
        reply = self.client.user_reply(self.episode, self.messages)
        if reply is not None:
            self.messages.append({"role": "user", "content": reply})
        return reply

    def verify(self, answer: str | None) -> Verdict:
        """Grade the episode: `answer` (the agent's final answer, None when it gave none) and the
        conversation."""
        return self.client.verify(self.episode, answer=answer, messages=self.messages)
