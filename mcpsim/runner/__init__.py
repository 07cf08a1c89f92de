"""The client side: agents (`agents`), the chat-completions client (`llm`), simulated users
(`users`), transports to a world (`backends`), one rollout (`loop`), many rollouts with
concurrency and resume (`run`) and their metrics (`metrics`). It reaches worlds over MCP and the
control plane (the in-process backend embeds a server)."""

from mcpsim.runner._agents import RandomAgent, Turn, make_agent
from mcpsim.runner._backends import HttpBackend, InProcessBackend, LiveEpisode, StdioBackend
from mcpsim.runner._cluster import LocalCluster, run_on_ray, serve_on_ray
from mcpsim.runner._jobs import ServerJobs
from mcpsim.runner._llm import ChatClient, ModelError
from mcpsim.runner._loop import Conversation, conversation_dicts, final_answer, mcp_tools_as_functions
from mcpsim.runner._run import RunError, run_episodes
from mcpsim.runner._settings import Executor, RunConfig, Transport
from mcpsim.runner._users import ScriptedUser, User

__all__ = [
    "ChatClient",
    "Conversation",
    "Executor",
    "HttpBackend",
    "InProcessBackend",
    "LiveEpisode",
    "LocalCluster",
    "ModelError",
    "RandomAgent",
    "RunConfig",
    "RunError",
    "ScriptedUser",
    "StdioBackend",
    "Transport",
    "Turn",
    "User",
    "conversation_dicts",
    "final_answer",
    "make_agent",
    "mcp_tools_as_functions",
    "run_episodes",
    "run_on_ray",
    "serve_on_ray",
    "ServerJobs",
]
