"""An episode's token turns as one sequence a trainer can load, with a loss mask.

A multi-turn episode is one sequence when each turn's prompt extends the one before: the earlier
prompt, the completion sampled for it, then what came after (tool results, the user's next
message, the template's markers). `merge_turns` checks that for every turn and, when it holds,
writes the sequence once: the first prompt (mask 0), each completion (mask 1, with its
log-probabilities), and the tokens each later prompt adds (mask 0). Each prompt is rendered
again from the messages, so this can break (the reasoning is not sent back, a chat template
re-serialises tool calls or drops earlier reasoning); then the turns must be trained one by one,
and the break is reported by message index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mcpsim.trajectories._records import TokenTurn


def merge_turns(turns: Sequence[TokenTurn]) -> dict[str, Any]:
    """For turns in conversation order: `merged` (`{"token_ids", "loss_mask", "logprobs"}`, or
    None unless every prompt is known and extends the one before), `template_breaks` (the message
    indices of turns whose prompt does not start with the previous prompt and completion) and
    `prompts_missing` (the message indices of turns without prompt ids; a turn after one of these
    cannot be checked, so it is not a break)."""
    missing = [t.message_index for t in turns if t.prompt_token_ids is None]
    breaks = []
    for before, turn in zip(turns, turns[1:], strict=False):
        if before.prompt_token_ids is None or turn.prompt_token_ids is None:
            continue
        prefix = [*before.prompt_token_ids, *before.token_ids]
        if turn.prompt_token_ids[: len(prefix)] != prefix:
            breaks.append(turn.message_index)
    merged = None
    if turns and not missing and not breaks:
        merged = _merged(turns)
    return {"merged": merged, "template_breaks": breaks, "prompts_missing": missing}


def _merged(turns: Sequence[TokenTurn]) -> dict[str, Any]:
    """The sequence of turns whose prompts each extend the previous prompt and completion."""
    ids: list[int] = []
    mask: list[int] = []
    logprobs: list[float | None] = []
    for turn in turns:
        added = (turn.prompt_token_ids or [])[len(ids) :]  # all of it for the first turn
        ids += added
        mask += [0] * len(added)
        logprobs += [None] * len(added)
        ids += turn.token_ids
        mask += [1] * len(turn.token_ids)
        logprobs += turn.logprobs if turn.logprobs is not None else [None] * len(turn.token_ids)
    return {"token_ids": ids, "loss_mask": mask, "logprobs": logprobs}
