"""The verifiers taskset id `mcpsim-verifiers` (verifiers imports tasksets by a top-level module
name): `vf-eval mcpsim-verifiers --env.taskset.server URL ...`. The code is
`mcpsim_client.adapters.verifiers`."""

from mcpsim_client.adapters.verifiers import MCPSimEnv, MCPSimHarness, MCPSimTaskset, load_environment

__all__ = ["MCPSimEnv", "MCPSimHarness", "MCPSimTaskset", "load_environment"]
