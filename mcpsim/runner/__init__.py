"""The client side: agents (`agents`), the chat-completions client (`llm`), simulated users
(`users`), transports to a world (`backends`), one rollout (`loop`), many rollouts with
concurrency and resume (`run`) and their metrics (`metrics`). It reaches worlds over MCP and the
control plane (the in-process backend embeds a server)."""
