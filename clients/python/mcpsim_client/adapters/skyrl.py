"""mcpsim episodes as a SkyRL text environment (`pip install skyrl-gym`), for SkyRL's trainer.

    import skyrl_gym
    from mcpsim_client.adapters.skyrl import register
    register()                                   # the id "mcpsim"
    env = skyrl_gym.make("mcpsim", env_config={"server": URL, "world": "retail"},
                         extras={"task": "gift-card-balance"})
    prompt, _ = env.init([])                     # policy, tools and the user's request
    out = env.step('<tool_call>{"name": "find_customer_by_email", "arguments": {...}}</tool_call>')

One environment is one mcpsim episode of the row's task (`extras["task"]`). The model's text is
the action: every `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` in it (the Hermes and
Qwen format) runs over MCP on the episode and comes back as a `<tool_response>` observation; a
reply without a tool call goes to the task's simulated user (the server's user route): its reply is
the next observation, or, when it has nothing more to say, the reply was the final answer, graded
by mcpsim's verifier: the reward (strict by default, or `reward: partial`) and `done`.
`max_turns` (default 30) grades without an answer. The last step's `metadata` says why the
episode ended (`ending`: answered, step_limit, timeout or error; `truncated` for step_limit) and
the verdict's parts (`strict`, `partial`, `passed`, `failure`, each check's result in `checks`);
a failed request to the server ends it ungraded (reward 0.0, `error`). `get_metrics` adds
`mcpsim_truncated` and `mcpsim_failed`.
`env_config`: `server`, `world`, `token_var` (the variable holding the control-plane token,
default MCPSIM_TOKEN), `reward`, `max_turns`.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from skyrl_gym.envs import register as _register
from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType

from mcpsim_client import Client, EpisodeInfo, MCPSimError
from mcpsim_client.dialogue import Dialogue, ending_of
from mcpsim_client.models import Ending, ending_info, reward_kind

__all__ = ["ENV_ID", "MCPSimTextEnv", "register"]

ENV_ID = "mcpsim"
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def register() -> None:
    """Register the environment with skyrl_gym as `mcpsim`."""
    _register(id=ENV_ID, entry_point="mcpsim_client.adapters.skyrl:MCPSimTextEnv")


def _setting(config: Any, name: str, default: Any) -> Any:
    if config is None:
        return default
    value = config.get(name, default) if hasattr(config, "get") else getattr(config, name, default)
    return default if value is None else value


class MCPSimTextEnv(BaseTextEnv):
    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = extras or {}
        if "task" not in extras:
            raise ValueError('extras needs "task": the mcpsim task id of this row')
        token_var = _setting(env_config, "token_var", "MCPSIM_TOKEN")
        self.client = Client(_setting(env_config, "server", "http://127.0.0.1:8000"), os.environ.get(token_var))
        self.world: str = _setting(env_config, "world", "retail")
        self.reward_kind = reward_kind(_setting(env_config, "reward", "strict"))
        self.task: str = extras["task"]
        self.max_turns = int(extras.get("max_turns", _setting(env_config, "max_turns", 30)))
        self.episode: EpisodeInfo | None = None
        self.dialogue: Dialogue | None = None
        self.verdict: dict[str, Any] | None = None
        self.ending: Ending | None = None

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Create the episode; the prompt is the policy with the tools, then the user's request
        (a row's own prompt, when it has one, replaces the request)."""
        self.episode = self.client.create(self.world, task=self.task)
        tools = [t.as_openai()["function"] for t in self.client.tools(self.episode)]
        task = next((t for t in self.client.tasks(self.world) if t.id == self.task), None)
        self.dialogue = Dialogue(self.client, self.episode, task.instruction if task else "")
        system = (
            self.dialogue.policy
            + "\n\n# Tools\n\nYou may call one or more functions. Their signatures are within <tools></tools>:\n"
            + "<tools>\n"
            + "\n".join(json.dumps(t) for t in tools)
            + "\n</tools>\n\nFor each call, write a JSON object with the function's name and arguments within "
            + '<tool_call></tool_call> tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-object>}\n'
            + "</tool_call>\nWrite your final answer to the user without any tool call."
        )
        request = list(prompt) if prompt else [self.dialogue.messages[1]]
        return [{"role": "system", "content": system}, *request], {"task": self.task, "mcp_url": self.episode.mcp_url}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        dialogue = self.dialogue
        if dialogue is None:
            raise RuntimeError("call init() before step()")
        self.turns += 1
        try:
            return self._act(dialogue, action)
        except MCPSimError as exc:  # the server failed: the episode ends, ungraded, and says why
            ending = ending_of(exc)
            assert ending is not None
            self.ending = ending
            try:
                self.close()
            except MCPSimError:  # the server expires what it keeps
                self.episode = self.dialogue = None
            metadata = ending_info(ending, error=str(exc))
            return BaseTextEnvStepOutput(observations=[], reward=0.0, done=True, metadata=metadata)

    def _act(self, dialogue: Dialogue, action: str) -> BaseTextEnvStepOutput:
        calls = TOOL_CALL.findall(action)
        if not calls:
            reply = dialogue.answer(action)
            if reply is None:
                return self._finish(action, "answered")
            said = [{"role": "user", "content": reply}]
            if self.turns >= self.max_turns:
                return self._finish(None, "step_limit", said)
            return BaseTextEnvStepOutput(observations=said, reward=0.0, done=False, metadata={})
        responses = []
        for number, raw in enumerate(calls):
            call_id = f"call_{self.turns}_{number}"
            try:
                call = json.loads(raw)
                if not isinstance(call, dict) or not isinstance(call.get("name"), str):
                    raise ValueError('a tool call is {"name": ..., "arguments": {...}}')
                arguments = call.get("arguments") or {}
                if not isinstance(arguments, dict):
                    raise ValueError("arguments must be a JSON object")
            except ValueError as exc:
                responses.append(f"Error: the tool call is not valid ({exc}); nothing was done")
                continue
            responses.append(dialogue.tool_call(call_id, call["name"], arguments).as_message_content())
        observation = "\n".join(f"<tool_response>\n{r}\n</tool_response>" for r in responses)
        if self.turns >= self.max_turns:
            return self._finish(None, "step_limit", [{"role": "user", "content": observation}])
        return BaseTextEnvStepOutput(
            observations=[{"role": "user", "content": observation}], reward=0.0, done=False, metadata={}
        )

    def _finish(
        self, answer: str | None, ending: Ending, observations: ConversationType | None = None
    ) -> BaseTextEnvStepOutput:
        assert self.dialogue is not None
        verdict = self.dialogue.verify(answer)
        self.verdict, self.ending = verdict.raw, ending
        self.close()
        reward = verdict.score(self.reward_kind)
        metadata = {"reward": verdict.reward, "partial_reward": verdict.partial_reward} | ending_info(ending, verdict)
        return BaseTextEnvStepOutput(observations=observations or [], reward=reward, done=True, metadata=metadata)

    def get_metrics(self) -> dict[str, Any]:
        verdict = self.verdict or {}
        return {
            "mcpsim_passed": float(bool(verdict.get("passed"))),
            "mcpsim_truncated": float(self.ending == "step_limit"),
            "mcpsim_failed": float(self.ending in ("timeout", "error")),
            "turns": self.turns,
        }

    def close(self) -> None:
        if self.episode is not None:
            self.client.delete(self.episode, missing_ok=True)
            self.episode = self.dialogue = None
