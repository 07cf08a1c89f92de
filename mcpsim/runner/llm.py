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

from mcpsim.trajectories.schema import FunctionCall, Message, ToolCall, ToolDef, Usage


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

    def __post_init__(self) -> None:
        self._http = httpx.AsyncClient(timeout=self.timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def complete(
        self, messages: list[Message], tools: list[ToolDef] | None, usage: Usage, *, stop: list[str] | None = None
    ) -> Message:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump(exclude_none=True) for m in messages],
        }
        if tools:
            body["tools"] = [t.model_dump() for t in tools]
        for key, value in (("temperature", self.temperature), ("seed", self.seed), ("stop", stop)):
            if value is not None:
                body[key] = value
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
                    return self._parse(response, usage)
                last = f"HTTP {response.status_code}: {response.text[:300]}"
                if response.status_code != 429 and response.status_code < 500:
                    raise ModelError(f"the model endpoint refused the request: {last}")
            if attempt < self.retries:
                await anyio.sleep(delay * (1 + random.random() / 4))  # jitter only spreads retries out
                delay = min(delay * 2, 8.0)
        raise ModelError(f"the model endpoint failed {self.retries + 1} times; last: {last}")

    @staticmethod
    def _parse(response: httpx.Response, usage: Usage) -> Message:
        try:
            data = response.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise ModelError(f"the model endpoint answered without a message: {response.text[:300]}") from exc
        usage.add(data.get("usage"))
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
            role="assistant", content=content if isinstance(content, str) else None, tool_calls=calls or None
        )
