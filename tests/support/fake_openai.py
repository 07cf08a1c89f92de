"""A fake OpenAI-compatible chat-completions server: real HTTP on 127.0.0.1, scripted replies.

Each reply is a dict: {"content": str} or {"tool_calls": [(name, arguments_string)]}, or
{"status": 500} for a server error; a request with `"stream": true` gets the same reply as
server-sent chunks. When the script runs out, `then` decides (default: a final
text answer). Every request body is kept in `requests`.

Token ids, as vLLM returns them when asked (`tokens`): "token_ids" answers `prompt_token_ids`
and the choice's `token_ids` (vLLM >= 0.10.2, `return_token_ids`) with `logprobs`; "logprob_ids"
answers only `logprobs` whose tokens read "token_id:N" (`return_tokens_as_token_ids`). The ids
come from `fake_tokenize`, a byte-level tokenizer: the prompt's are those of the request's
messages, so a test can check they are the exact prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mcpsim.serve._app import serve_in_thread


@dataclass
class FakeModel:
    script: list[dict[str, Any]] = field(default_factory=list)
    then: Callable[[dict[str, Any]], dict[str, Any]] = lambda body: {"content": "All done."}
    requests: list[dict[str, Any]] = field(default_factory=list)
    keys: list[str | None] = field(default_factory=list)  # each request's bearer token (None: none sent)
    tokens: str | None = None  # None, "token_ids" or "logprob_ids" (see the module's doc)
    # the `policy_version` each answer reports at the top level, given the request's number (1, 2...)
    policy_version: Callable[[int], Any] | None = None

    def reply(self, body: dict[str, Any]) -> JSONResponse:
        self.requests.append(body)
        step = self.script.pop(0) if self.script else self.then(body)
        if "status" in step:
            return JSONResponse({"error": {"message": "overloaded"}}, status_code=step["status"])
        message: dict[str, Any] = {"role": "assistant", "content": step.get("content")}
        for key in ("reasoning_content", "reasoning"):  # as reasoning parsers return it (vLLM, SGLang)
            if key in step:
                message[key] = step[key]
        if "tool_calls" in step:
            message["tool_calls"] = [
                {
                    "id": f"call_{len(self.requests)}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (name, arguments) in enumerate(step["tool_calls"])
            ]
        choice: dict[str, Any] = {
            "index": 0,
            "message": message,
            "finish_reason": "tool_calls" if "tool_calls" in step else "stop",
        }
        answer: dict[str, Any] = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [choice],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        }
        if self.policy_version is not None:
            answer["policy_version"] = self.policy_version(len(self.requests))
        if self.tokens is not None and body.get("logprobs"):
            completion = fake_tokenize(json.dumps(message, sort_keys=True))
            logprobs = [-(i % 7) / 10 for i in range(len(completion))]
            if self.tokens == "token_ids" and body.get("return_token_ids"):
                answer["prompt_token_ids"] = fake_tokenize(json.dumps(body["messages"], sort_keys=True))
                choice["token_ids"] = completion
                entries = [{"token": chr(t), "logprob": lp} for t, lp in zip(completion, logprobs, strict=True)]
            elif self.tokens == "logprob_ids" and body.get("return_tokens_as_token_ids"):
                entries = [
                    {"token": f"token_id:{t}", "logprob": lp} for t, lp in zip(completion, logprobs, strict=True)
                ]
            else:
                entries = []
            choice["logprobs"] = {"content": entries}
        return JSONResponse(answer)


def _stream(answer: dict[str, Any]) -> Iterator[str]:
    """A completion as the server-sent events of `"stream": true`: the role and content, each
    tool call (name and arguments), then the finish reason and the usage, then [DONE]."""
    choice = answer["choices"][0]
    message = choice["message"]
    head = {k: answer[k] for k in ("id", "model")} | {"object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": message.get("content") or ""}]
    for index, call in enumerate(message.get("tool_calls") or []):
        deltas.append(
            {"tool_calls": [{"index": index, "id": call["id"], "type": "function", "function": call["function"]}]}
        )
    for delta in deltas:
        yield f"data: {json.dumps(head | {'choices': [{'index': 0, 'delta': delta, 'finish_reason': None}]})}\n\n"
    last = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
    yield f"data: {json.dumps(head | {'choices': [last], 'usage': answer['usage']})}\n\n"
    yield "data: [DONE]\n\n"


def fake_tokenize(text: str) -> list[int]:
    """A byte-level tokenizer: one id per UTF-8 byte."""
    return list(text.encode())


@contextmanager
def fake_openai(model: FakeModel) -> Iterator[str]:
    async def completions(request: Request) -> Response:
        body = json.loads(await request.body())
        bearer = request.headers.get("authorization", "")
        model.keys.append(bearer.removeprefix("Bearer ") if bearer.startswith("Bearer ") else None)
        answer = model.reply(body)
        if not body.get("stream") or answer.status_code != 200:
            return answer
        return Response("".join(_stream(json.loads(answer.body))), media_type="text/event-stream")

    app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"])])
    with serve_in_thread(app) as url:
        yield f"{url}/v1"
