"""The chat messages the audit writes into the conversations it grades: the task's instruction
(all a do-nothing agent says) and a tool call with its result."""

from __future__ import annotations

import json
from typing import Any

from mcpsim.tasks import Task

__all__ = ["call_messages", "instruction_message"]


def instruction_message(task: Task) -> dict[str, Any]:
    return {"role": "user", "content": task.instruction}


def call_messages(tool: str, args: dict[str, Any], call_id: str, content: str) -> list[dict[str, Any]]:
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": tool, "arguments": json.dumps(args)}}
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "name": tool, "content": content},
    ]
