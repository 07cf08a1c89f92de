"""A fake OpenAI-compatible chat-completions server: real HTTP on 127.0.0.1, scripted replies.

Each reply is a dict: {"content": str} or {"tool_calls": [(name, arguments_string)]}, or
{"status": 500} for a server error. When the script runs out, `then` decides (default: a final
text answer). Every request body is kept in `requests`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from mcpsim.serve.app import serve_in_thread


@dataclass
class FakeModel:
    script: list[dict[str, Any]] = field(default_factory=list)
    then: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: {"content": "All done."}
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, body: dict[str, Any]) -> JSONResponse:
        self.requests.append(body)
        step = self.script.pop(0) if self.script else self.then(body)
        if "status" in step:
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=step["status"])
        message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
        if "tool_calls" in step:
            message["tool_calls"] = [
                {
                    "id": f"call_{len(self.requests)}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (name, arguments) in enumerate(step["tool_calls"])
            ]
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "model": body.get("model"),
                "choices": [
                    {"index": 0, "message": message, "finish_reason": "tool_calls" if "tool_calls" in step else "stop"}
                ],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
            }
        )


@contextmanager
def fake_openai(model: FakeModel) -> Iterator[str]:
    async def completions(request: Request) -> JSONResponse:
        return model.reply(json.loads(await request.body()))

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    with serve_in_thread(app) as url:
        yield f"{url}/v1"
