"""One episode's conversation as the adapters hold it: the OpenAI-style messages, the tool calls
run over MCP, the simulated user asked (`POST /episodes/{id}/user`) after each answer of the
agent's, and the verdict at the end. Blocking: OpenEnv, TRL and SkyRL call environments
synchronously."""

from __future__ import annotations

import json
from typing import Any

from mcpsim_client.client import Client
from mcpsim_client.models import EpisodeInfo, ToolResult, Verdict


class Dialogue:
    """`messages` starts with the policy (system) and the user's request; `tool_call` and
    `answer` add the agent's turns and what came back, `verify` grades the episode on them."""

    def __init__(self, client: Client, episode: EpisodeInfo, instruction: str) -> None:
        self.client, self.episode = client, episode
        self.policy = client.policy(episode)
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
