"""What the control plane reads from a request and how it refuses one: bodies read whole under a
size limit, strict JSON, the pydantic models of the request bodies, and HttpError, a refusal
answered as JSON with its reason."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

MAX_BODY_BYTES = 64 * 1024
MAX_GROUP = 64  # episodes one POST /episodes may create (ControlPlane.max_group)


class CreateEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    world: str | None = Field(None, max_length=64, description="World name; the server's default world if omitted")
    seed: int | None = Field(None, ge=0, le=2**63 - 1, description="Default 0; a task brings its own")
    scale: str | None = Field(None, max_length=32, description="Default 'default'; a task brings its own")
    task: str | None = Field(None, max_length=100, description="A task id: its seed, scale and setup are used")
    faults: str | dict[str, Any] | None = Field(
        None,
        description="A fault profile: none, flaky, hostile (or a profile of the server's --faults-dir) by "
        "name, or one written inline; never a file path. Default: the task's, else the "
        "server's --faults",
    )
    group: int | None = Field(
        None,
        ge=1,
        strict=True,
        description="Create this many episodes of the same start state at once (a GRPO group), each "
        f"with its own id, answered as {{'episodes': [...]}}; at most {MAX_GROUP}",
    )


class VerifyEpisode(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str | None = Field(None, max_length=100_000, description="The agent's final answer to the user")
    messages: list[dict[str, Any]] | None = Field(
        None,
        max_length=10_000,
        description="The conversation (OpenAI-style messages: role, content, tool_calls, "
        "tool_call_id), for checks on the dialogue such as a confirmation",
    )


class UserTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    messages: list[dict[str, Any]] = Field(
        ...,
        max_length=10_000,
        description="The conversation so far (OpenAI-style messages), ending with the agent's latest answer",
    )


class HttpError(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers, self.details = status, message, headers, details


Body = TypeVar("Body", bound=BaseModel)


def validated(model: type[Body], body: Any, what: str) -> Body:
    """`body` as `model`, or 422 with pydantic's reasons (`details`)."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise HttpError(422, f"invalid {what} request", details=json.loads(exc.json(include_url=False))) from None


def _error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status, headers=headers)


MAX_JSON_DEPTH = 32


async def read_body(request: Request, limit: int, what: str) -> bytes:
    """The whole body, streamed into one buffer (linear, not quadratic), 413 past `limit` bytes
    (at once when Content-Length says so)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise HttpError(413, f"{what} larger than {limit} bytes")
    body = bytearray()
    try:
        async for chunk in request.stream():
            body += chunk
            if len(body) > limit:
                raise HttpError(413, f"{what} larger than {limit} bytes")
    except ClientDisconnect:  # it hung up, or was closed past its body deadline: no one to answer
        raise HttpError(400, f"the client disconnected before sending its whole {what}") from None
    return bytes(body)


def _no_constant(name: str) -> Any:
    raise HttpError(422, f"request body holds {name}: numbers must be finite")


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise HttpError(422, f"request body holds the number {text[:40]}, out of range: numbers must be finite")
    return value


def _check_json_value(value: Any) -> None:
    """Depth and text of a parsed body (iterative: no recursion on hostile input)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            texts: list[str] = [item]
        elif isinstance(item, dict | list):
            if depth > MAX_JSON_DEPTH:
                raise HttpError(422, f"request body is nested more than {MAX_JSON_DEPTH} levels deep")
            texts = [k for k in item if isinstance(k, str)] if isinstance(item, dict) else []
            stack.extend((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
        else:
            continue
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise HttpError(
                    422, "request body holds a lone surrogate (such as \\udcff): strings must be valid Unicode"
                ) from None


def parse_json(body: bytes) -> Any:
    """Strict JSON: UTF-8, finite numbers, valid Unicode strings, at most MAX_JSON_DEPTH deep."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HttpError(400, f"request body is not valid UTF-8: {exc}") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise HttpError(422, f"request body is nested more than {MAX_JSON_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise HttpError(400, f"request body is not valid JSON: {exc}") from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise HttpError(422, f"request body holds an unreadable value: {exc}") from None
    _check_json_value(value)
    return value
