"""Whole ASGI exchanges, for the world host's look into its worlds' traffic: a request body read
whole (at most MAX_BODY) and handed out again, an app's whole response captured, one sent."""

from __future__ import annotations

from typing import Any

from starlette.types import Message, Receive, Scope, Send

MAX_BODY = 1 << 20  # an episode request or a JSON-RPC message read whole: at most 1 MiB


async def _read_body(receive: Receive) -> bytes:
    body = bytearray()
    while len(body) <= MAX_BODY:
        message = await receive()
        if message["type"] != "http.request":
            break
        body += message.get("body", b"")
        if not message.get("more_body"):
            return bytes(body)
    raise ValueError("request body too large or cut short")


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands out `body` (read already) first, then whatever the client sends next
    (its disconnect)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _captured(app: Any, scope: Scope, receive: Receive) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """An app's whole response (JSON responses: small and complete)."""
    status, headers, chunks = 500, [], []

    async def send(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], list(message.get("headers", []))
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(scope, receive, send)
    return status, headers, b"".join(chunks)


async def _respond(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    kept = [(k, v) for k, v in headers if k.lower() != b"content-length"]
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*kept, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
