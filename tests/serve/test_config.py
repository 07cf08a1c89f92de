"""One source for every setting: ServeConfig's fields (mcpsim/serve/_settings.py) give the defaults
and environment variables that `mcpsim serve --http`'s options and `ServeConfig.from_env` use, and
RunConfig's give `mcpsim run`'s."""

from __future__ import annotations

import dataclasses

import pytest

from mcpsim.cli._running import run
from mcpsim.cli._serving import serve
from mcpsim.engine._templates import parse_size
from mcpsim.runner._settings import RunConfig
from mcpsim.serve._access import public_base_url
from mcpsim.serve._settings import DEFAULT_LIMITS, DEFAULTS, ClientLimits, ServeConfig
from tests.support.commands import serve_http_config

# option name -> (ServeConfig or ClientLimits field, how the option shows "no limit")
SERVE_OPTIONS = {
    "host": ("host", None),
    "seed": ("seed", None),
    "scale": ("scale", None),
    "ttl": ("ttl_seconds", 0),
    "max_episodes": ("max_episodes", None),
    "max_episode_bytes": ("max_episode_bytes", "bytes"),
    "max_bytes_per_episode": ("max_bytes_per_episode", "bytes"),
    "template_cache_bytes": ("template_cache_bytes", "bytes"),
    "sessions_per_client": ("sessions_per_client", 0),
    "sessions_per_address": ("sessions_per_address", 0),
    "session_idle_timeout": ("session_idle_seconds", 0),
    "max_sessions": ("max_sessions", 0),
    "mcp_episodes_per_client": ("mcp_episodes_per_client", 0),
    "mcp_episodes_per_address": ("mcp_episodes_per_address", 0),
    "header_timeout": ("header_timeout_seconds", 0),
    "body_timeout": ("body_timeout_seconds", 0),
    "connections_per_address": ("connections_per_address", 0),
}


def _options(command) -> dict:
    return {p.name: p for p in command.params}


@pytest.mark.parametrize("option", sorted(SERVE_OPTIONS))
def test_serve_options_take_their_defaults_and_variables_from_the_config(option: str) -> None:
    name, kind = SERVE_OPTIONS[option]
    owner = ClientLimits if name in {f.name for f in dataclasses.fields(ClientLimits)} else ServeConfig
    expected = getattr(DEFAULT_LIMITS if owner is ClientLimits else DEFAULTS, name)
    param = _options(serve)[option]
    shown = parse_size(param.default) if kind == "bytes" else param.default
    assert shown == (expected if expected is not None else 0), option
    assert param.envvar == owner.env_var(name)


def test_every_setting_has_its_own_variable() -> None:
    variables = [
        f.metadata["env"] for cls in (ServeConfig, ClientLimits) for f in dataclasses.fields(cls) if "env" in f.metadata
    ]
    assert len(variables) == len(set(variables))
    assert all(v.startswith("MCPSIM_") for v in variables)
    assert {f.name for f in dataclasses.fields(ServeConfig)} - {"client_limits"} == {
        f.name for f in dataclasses.fields(ServeConfig) if "env" in f.metadata
    }


def test_from_env_reads_every_variable() -> None:
    env = {
        "MCPSIM_WORLD": "bank",
        "MCPSIM_SEED": "7",
        "MCPSIM_TTL": "0",
        "MCPSIM_MAX_EPISODE_BYTES": "512MiB",
        "MCPSIM_NO_AUTH": "yes",
        "MCPSIM_ALLOWED_HOSTS": "a.example b.example",
        "MCPSIM_VERDICT_DETAIL": "summary",
        "MCPSIM_MCP_EPISODES_PER_CLIENT": "0",
        "MCPSIM_SESSION_IDLE_TIMEOUT": "60",
    }
    config = ServeConfig.from_env(env)
    assert (config.world, config.seed, config.ttl_seconds, config.max_episode_bytes) == ("bank", 7, None, 512 * 2**20)
    assert config.no_auth and config.allowed_hosts == ["a.example", "b.example"] and config.verdict_detail == "summary"
    assert config.client_limits.mcp_episodes_per_client is None
    assert config.client_limits.session_idle_seconds == 60
    assert ServeConfig.from_env({}) == ServeConfig()


@pytest.mark.parametrize(
    ("variable", "text"),
    [
        ("MCPSIM_SEED", "-1"),
        ("MCPSIM_TTL", "soon"),
        ("MCPSIM_TTL", "inf"),
        ("MCPSIM_NO_AUTH", "maybe"),
        ("MCPSIM_VERDICT_DETAIL", "everything"),
        ("MCPSIM_MAX_EPISODES", "0"),
        ("MCPSIM_MAX_SESSIONS", "lots"),
        ("MCPSIM_MAX_EPISODE_BYTES", "big"),
    ],
)
def test_a_bad_variable_is_named_in_the_error(variable: str, text: str) -> None:
    with pytest.raises(ValueError, match=variable):
        ServeConfig.from_env({variable: text})


@pytest.mark.parametrize(
    ("option", "field"),
    [
        ("concurrency", "concurrency"),
        ("trials", "trials"),
        ("max_steps", "max_steps"),
        ("timeout", "timeout"),
        ("user_spec", "user"),
        ("base_url", "base_url"),
        ("api_key_env", "api_key_env"),
        ("seed", "seed"),
        ("transport", "transport"),
    ],
)
def test_run_options_take_their_defaults_from_the_run_plan(option: str, field: str) -> None:
    assert _options(run)[option].default == getattr(RunConfig, field)


def test_serve_http_passes_every_option_to_its_config(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    args = ["serve", "retail", "--http", "--port", "0", "--token", "t" * 20, "--seed", "3", "--scale", "small"]
    args += ["--max-episodes", "7", "--ttl", "9", "--allowed-host", "example.com", "--record", str(tmp_path)]
    args += ["--sessions-per-client", "2", "--session-idle-timeout", "5", "--max-episode-bytes", "1MiB"]
    args += ["--max-bytes-per-episode", "3MiB"]
    config = serve_http_config(monkeypatch, args, {k: None for k in ("MCPSIM_TOKEN", "MCPSIM_NO_AUTH")})
    assert (config.world, config.seed, config.scale, config.token) == ("retail", 3, "small", "t" * 20)
    assert (config.max_episodes, config.ttl_seconds, config.record_dir) == (7, 9.0, str(tmp_path))
    assert config.allowed_hosts == ["example.com"] and config.max_episode_bytes == 1024**2
    assert config.max_bytes_per_episode == 3 * 1024**2
    assert config.client_limits.sessions_per_client == 2 and config.client_limits.session_idle_seconds == 5.0
    assert config.client_limits.max_sessions == DEFAULT_LIMITS.max_sessions


def test_the_verdict_details_are_the_graders() -> None:
    from typing import get_args

    from mcpsim.grading._verdict import VerdictDetail
    from mcpsim.serve._settings import VERDICT_DETAILS

    assert get_args(VerdictDetail) == VERDICT_DETAILS


@pytest.mark.parametrize(
    ("host", "port", "given", "base"),
    [
        ("127.0.0.1", 8000, None, "http://127.0.0.1:8000"),
        ("0.0.0.0", 8000, None, "http://127.0.0.1:8000"),  # a wildcard bind is reached locally as loopback
        ("::1", 80, None, "http://[::1]:80"),
        ("127.0.0.1", 0, None, None),  # a port picked at bind time: URLs from the listening socket
        ("0.0.0.0", 0, "https://Sim.Example.org/bench/", "https://sim.example.org/bench"),
    ],
)
def test_the_public_base_url_is_the_given_one_normalized_else_the_bind_address(host, port, given, base) -> None:
    assert public_base_url(host, port, given) == base


def test_a_public_url_that_is_not_a_base_url_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="no query, fragment or credentials"):
        public_base_url("127.0.0.1", 8000, "http://sim.test/?x=1")
