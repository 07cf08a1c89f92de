"""A client for any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, SGLang, ...):
one POST per turn, bounded retries of transport errors, 429 and 5xx, token usage counted."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from mcpsim.trajectories import FunctionCall, Message, TokenTurn, ToolCall, ToolDef, Usage

# Request fields for token ids: vLLM >= 0.10.2 answers `prompt_token_ids` and each choice's
# `token_ids`; older vLLM writes each logprob's token as "token_id:N".
TOKEN_FIELDS: dict[str, Any] = {"logprobs": True, "return_token_ids": True, "return_tokens_as_token_ids": True}


class ModelError(RuntimeError):
    """The model endpoint failed for good (after retries), or answered something unusable."""


@dataclass
class ChatClient:
    model: str
    base_url: str = "https://api.openai.com/v1"
    api_key_env: str = "OPENAI_API_KEY"
    retries: int = 4
    backoff: float = 0.5  # seconds before the first retry; doubles each time, at most 8
    timeout: float = 120.0
    temperature: float | None = None
    seed: int | None = None
    max_tokens: int | None = None  # the completion's length limit (`max_tokens`)
    # more request fields, sent as given (vLLM's `chat_template_kwargs`, `top_k`...): the ones above win
    extra_body: dict[str, Any] | None = None
    # ask for token ids and log-probabilities (vLLM, SGLang; OpenAI's API refuses the fields).
    # Recorded per assistant turn in `Usage.tokens`; a client that did not ask records none (a
    # simulated user's client shares the episode's usage but never speaks as the assistant).
    token_ids: bool = False

    def __post_init__(self) -> None:
        self._http = httpx.AsyncClient(timeout=self.timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self,
        messages: list[Message],
        tools: list[ToolDef] | None,
        usage: Usage,
        *,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,  # structured output: {"type": "json_schema", ...}
    ) -> Message:
        body: dict[str, Any] = {
            **(self.extra_body or {}),
            "model": self.model,
            # reasoning stays in the trajectory: endpoints refuse it or re-read it as the prompt
            "messages": [m.model_dump(exclude_none=True, exclude={"reasoning_content"}) for m in messages],
        }
        if tools:
            body["tools"] = [t.model_dump() for t in tools]
        settings = (
            ("temperature", self.temperature),
            ("seed", self.seed),
            ("max_tokens", self.max_tokens),
            ("stop", stop),
        )
        for key, value in (*settings, ("response_format", response_format)):
            if value is not None:
                body[key] = value
        if self.token_ids:
            body.update(TOKEN_FIELDS)
        headers = {}
        if api_key := os.environ.get(self.api_key_env):
            headers["Authorization"] = f"Bearer {api_key}"
        url = f"{self.base_url.rstrip('/')}/chat/completions"
        delay = self.backoff
        last = ""
        for attempt in range(self.retries + 1):
            try:
                response = await self._http.post(url, json=body, headers=headers)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return self._parse(response, usage, len(messages) if self.token_ids else None)
                last = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code != 429 and response.status_code < 500:
                    raise ModelError(f"the model endpoint refused the request: {last}")
            if attempt < self.retries:
                await anyio.sleep(delay * (1 + random.random() / 4))  # jitter only spreads retries out
                delay = min(delay * 2, 8.0)
        raise ModelError(f"the model endpoint failed {self.retries + 1} times; last: {last}")

    @staticmethod
    def _parse(response: httpx.Response, usage: Usage, index: int | None) -> Message:
        """The assistant message, its usage counted and, when `index` is given (the message's
        number in the conversation), its tokens recorded if the endpoint returned them."""
        try:
            data = response.json()
            choice = data["choices"][0]
            message = choice["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"the model endpoint answered without a message: {response.text[:300]}") from exc
        usage.add(data.get("usage"))
        if index is not None and (turn := token_turn(data, choice, index)) is not None:
            usage.record(turn)
        calls = []
        for number, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            arguments = function.get("arguments")
            calls.append(
                ToolCall(
                    id=str(call.get("id") or f"call_{usage.model_calls}_{number}"),
                    function=FunctionCall(
                        name=str(function.get("name") or ""),
                        arguments=arguments if isinstance(arguments, str) else json.dumps(arguments),
                    ),
                )
            )
        content = message.get("content")
        return Message(
            role="assistant",
            content=content if isinstance(content, str) else None,
            tool_calls=calls or None,
            reasoning_content=reasoning_of(message),
        )


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where OpenAI-compatible servers put a reasoning model's thinking, apart from the content: vLLM
and SGLang's reasoning parsers and DeepSeek write `reasoning_content`; newer vLLM, OpenRouter and
Ollama write `reasoning`."""


def reasoning_of(message: dict[str, Any]) -> str | None:
    """The reasoning of an assistant message, from the first of `REASONING_FIELDS` that holds text."""
    for key in REASONING_FIELDS:
        value = message.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _token_id(token: Any) -> int | None:
    """A token of `logprobs.content` as its id: "token_id:123" (vLLM's return_tokens_as_token_ids)."""
    if isinstance(token, str) and token.startswith("token_id:") and token[9:].isdigit():
        return int(token[9:])
    return None


def _int_list(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    return None


POLICY_VERSION_CHARS = 200  # the longest policy version kept (a checkpoint name, a step number)


def _policy_version(data: dict[str, Any], choice: dict[str, Any]) -> int | str | None:
    """The `policy_version` the endpoint reported (top level, else on the choice), if any."""
    value = data.get("policy_version")
    value = choice.get("policy_version") if value is None else value
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, str) and len(value) <= POLICY_VERSION_CHARS:
        return value
    raise ModelError(
        f"the model endpoint answered a policy_version that is not an integer or a string of at most "
        f"{POLICY_VERSION_CHARS} characters: {json.dumps(value)[:80]}"
    )


def token_turn(data: dict[str, Any], choice: dict[str, Any], index: int) -> TokenTurn | None:
    """The sampled tokens of a chat completion, if the endpoint returned them: completion ids from
    the choice's `token_ids` or from `logprobs.content` ("token_id:N"), their log-probabilities,
    the prompt's ids (`prompt_token_ids`, top level or on the choice) and the `policy_version`
    that sampled them (top level or on the choice). A malformed field (ids that are not
    integers, logprobs of another length, a version that is neither an integer nor a short
    string) is a ModelError: training on misaligned tokens is worse than not training."""
    entries = (choice.get("logprobs") or {}).get("content") if isinstance(choice.get("logprobs"), dict) else None
    entries = entries if isinstance(entries, list) else None
    ids = _int_list(choice.get("token_ids"))
    if choice.get("token_ids") is not None and ids is None:
        raise ModelError("the model endpoint answered token_ids that are not a list of integers")
    if ids is None and entries:
        parsed = [_token_id(e.get("token")) if isinstance(e, dict) else None for e in entries]
        ids = None if any(i is None for i in parsed) else [i for i in parsed if i is not None]
    if ids is None:
        return None
    logprobs = None
    if entries is not None:
        values = [e.get("logprob") if isinstance(e, dict) else None for e in entries]
        if len(values) != len(ids) or not all(isinstance(v, int | float) for v in values):
            raise ModelError(
                f"the model endpoint answered {len(ids)} completion token ids but {len(values)} log-probabilities"
            )
        logprobs = [float(v) for v in values if v is not None]
    raw_prompt = data.get("prompt_token_ids", choice.get("prompt_token_ids"))
    prompt = _int_list(raw_prompt)
    if raw_prompt is not None and prompt is None:
        raise ModelError("the model endpoint answered prompt_token_ids that are not a list of integers")
    reason = choice.get("finish_reason")
    return TokenTurn(
        message_index=index,
        prompt_token_ids=prompt,
        token_ids=ids,
        logprobs=logprobs,
        finish_reason=reason if isinstance(reason, str) else None,
        policy_version=_policy_version(data, choice),
    )
