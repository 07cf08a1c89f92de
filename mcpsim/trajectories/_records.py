"""The trajectory record: one JSON line per episode, the same schema whoever drove it (mcpsim's
runner, or any MCP client recorded server-side). Messages are in OpenAI chat format."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ModelWrapValidatorHandler, model_validator

from mcpsim.engine import scrub

SCHEMA_VERSION = 1


# Set while a whole trajectory is validated: its data was scrubbed once, at the top, so the
# models inside it do not scan their part again.
_scrubbed: ContextVar[bool] = ContextVar("mcpsim_trajectory_scrubbed", default=False)


class _ValidText(BaseModel):
    """Text that always encodes: a lone surrogate from a model or a client (which UTF-8 cannot
    hold, so the journal line could not be written) is stored as U+FFFD."""

    @model_validator(mode="before")
    @classmethod
    def _scrub(cls, data: Any) -> Any:
        return data if _scrubbed.get() else scrub(data)


class FunctionCall(_ValidText):
    name: str
    arguments: str  # a JSON string, as OpenAI sends it (it may be invalid JSON from a model)


class ToolCall(BaseModel):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class Message(_ValidText):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None  # on tool messages: which call this answers
    name: str | None = None  # on tool messages: the tool's name
    # on assistant messages: the model's reasoning, as the endpoint returned it apart from the
    # content (`reasoning_content` or `reasoning`: vLLM, SGLang, DeepSeek...); kept for training,
    # never sent back to the model
    reasoning_content: str | None = None


class ToolDef(BaseModel):
    """An OpenAI function-tool definition, converted from the MCP tools/list."""

    type: Literal["function"] = "function"
    function: dict[str, Any]  # {"name", "description", "parameters"}


class RowChange(BaseModel):
    table: str
    op: str
    key: str
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None


class CallLog(_ValidText):
    """One tool call: what was asked, what came back, how long it took, what rows it changed."""

    index: int
    tool: str
    arguments: Any
    ok: bool
    result: Any = None  # the structured result the tool returned (None on errors)
    error: str | None = None
    duration_ms: float | None = None
    call_seq: int | None = None  # the episode's call number (committed calls only)
    tool_call_id: str | None = None
    fault: dict[str, Any] | None = None  # what the fault profile injected into this call
    changes: list[RowChange] = []
    # the task role that made the call (a team task's role endpoint); left out of one-agent records
    role: str | None = Field(default=None, exclude_if=lambda v: v is None)


class TokenTurn(BaseModel):
    """One assistant message as the model sampled it, when the endpoint returns token ids (vLLM's
    `return_token_ids`, or `logprobs` with `return_tokens_as_token_ids`): what RL trains on
    without re-tokenising the text."""

    message_index: int  # the assistant message's index in Trajectory.messages
    prompt_token_ids: list[int] | None = None  # the exact prompt the model saw; None: the endpoint did not say
    token_ids: list[int]  # the sampled completion
    logprobs: list[float] | None = None  # one per completion token, under the sampling distribution
    finish_reason: str | None = None
    # the policy (weights) version that sampled this turn, when the endpoint reports it (an RL
    # server updating weights mid-run); left out of records that have none
    policy_version: int | str | None = Field(default=None, exclude_if=lambda v: v is None)


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    model_calls: int = 0
    # token ids and log-probabilities per assistant turn (absent unless the endpoint returned them)
    tokens: list[TokenTurn] | None = Field(default=None, exclude_if=lambda v: v is None)

    def add(self, other: dict[str, Any] | None) -> None:
        if other:
            self.prompt_tokens += int(other.get("prompt_tokens") or 0)
            self.completion_tokens += int(other.get("completion_tokens") or 0)
            self.total_tokens += int(other.get("total_tokens") or 0)
        self.model_calls += 1

    def record(self, turn: TokenTurn) -> None:
        """Keep an assistant turn's tokens (a turn sampled again replaces the earlier record)."""
        kept = [t for t in self.tokens or [] if t.message_index != turn.message_index]
        self.tokens = [*kept, turn]


Termination = Literal[
    "answered",  # the agent gave its final answer
    "user_stop",  # the simulated user ended the conversation
    "step_limit",  # the agent used all its steps
    "timeout",  # the episode ran past its time limit
    "model_error",  # the model endpoint kept failing
    "agent_error",  # the agent itself raised
    "cancelled",  # stopped early by --keep-first; snapshotted for a later run
    "recorded",  # recorded server-side from an outside client
    "server_error",  # the world server failed or could not be reached
    "grader_error",  # grading could not finish after retries (an infrastructure error, not a reward)
]


class Trajectory(_ValidText):
    schema_version: int = SCHEMA_VERSION
    run_id: str | None = None
    episode_id: str | None = None
    world: str
    world_version: str
    task_id: str | None = None
    trial: int = 0
    seed: int | None = None
    agent: str
    status: Literal["completed", "cancelled", "error"]
    termination: Termination
    messages: list[Message] = []
    tools: list[ToolDef] = []
    calls: list[CallLog] = []
    verdict: dict[str, Any] | None = None
    reward: float | None = None
    partial_reward: float | None = None
    state_hash: str | None = None
    usage: Usage = Field(default_factory=Usage)
    started_at: str | None = None  # wall-clock, for people; never part of a world's state
    duration_s: float | None = None
    error: str | None = None
    snapshot: str | None = None  # cancelled episodes: where their resumable snapshot lies

    @model_validator(mode="wrap")
    @classmethod
    def _scrub_once(cls, data: Any, handler: ModelWrapValidatorHandler[Trajectory]) -> Trajectory:
        """Scrub the whole record in one pass, not once more per message and call inside it."""
        if _scrubbed.get():
            return handler(data)
        token = _scrubbed.set(True)
        try:
            return handler(scrub(data))
        finally:
            _scrubbed.reset(token)

    @property
    def key(self) -> str:
        return f"{self.task_id}#{self.trial}"
