"""Every setting of an HTTP server in one place: its default, its environment variable and how
that variable is read. `mcpsim serve --http` takes its options' defaults and variable names from
here (`ServeConfig.default_of`, `.env_var`), and `servers/asgi.py` reads the environment with
`ServeConfig.from_env`, so the two cannot drift apart. docs/security.md explains the limits."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any

from mcpsim._sizes import DEFAULT_TEMPLATE_BYTES, parse_size

if TYPE_CHECKING:  # grading imports SQLAlchemy: not before a stdio server answers initialize
    from mcpsim.grading import VerdictDetail

VERDICT_DETAILS: tuple[str, ...] = ("full", "summary")  # get_args(VerdictDetail): tests/serve/test_config.py


def __getattr__(name: str) -> object:
    """`VerdictDetail`, from grading (which imports SQLAlchemy), on first use: `mcpsim serve`
    declares its options from this module before a stdio server answers `initialize`."""
    if name == "VerdictDetail":
        from mcpsim.grading import VerdictDetail

        return VerdictDetail
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


DEFAULT_MAX_EPISODES = 1000
DEFAULT_MAX_EPISODE_BYTES = 4 * 1024**3  # 4 GiB of live episode databases
DEFAULT_MAX_BYTES_PER_EPISODE = 256 * 1024**2  # one episode's database (the largest shipped template: ~50 MB)
DEFAULT_TTL_SECONDS = 3600.0  # an idle episode's life

Reader = Callable[[str, str], Any]  # (variable name, its text) -> the setting's value


def _setting(default: Any, env: str, read: Reader, *, factory: Callable[[], Any] | None = None) -> Any:
    metadata = {"env": env, "read": read}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


# -- how a variable's text becomes a value (each names the variable in its error) ---------------


def _text(_name: str, text: str) -> str:
    return text


def _whole(name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, not {text!r}") from None
    if value < 0:
        raise ValueError(f"{name} must be 0 or more, not {value}")
    return value


def _at_least_one(name: str, text: str) -> int:
    """A count that must be 1 or more (0 would refuse everything)."""
    value = _whole(name, text)
    if value < 1:
        raise ValueError(f"{name} must be 1 or more, not {value}")
    return value


def _limit(name: str, text: str) -> int | None:
    """A count where 0 means no limit."""
    try:
        return _whole(name, text) or None
    except ValueError:
        raise ValueError(f"{name} must be a whole number (0: no limit), not {text!r}") from None


def _seconds(name: str, text: str) -> float | None:
    """Seconds where 0 means never."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number of seconds (0: never), not {text!r}") from None
    if not 0 <= value < float("inf"):
        raise ValueError(f"{name} must be a finite number of seconds, 0 or more, not {text!r}")
    return value or None


def _size(name: str, text: str) -> int | None:
    """A byte size such as 4GiB; 0, none or unlimited: no limit."""
    if text.strip().lower() in ("0", "none", "unlimited"):
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        raise ValueError(f"{name}: {exc}") from None


def _flag(name: str, text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in ("0", "false", "no", "off"):
        return False
    if lowered in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"{name} must be 1 or 0 (true or false), not {text!r}")


def _words(_name: str, text: str) -> list[str]:
    return text.split()


def _verdict_detail(name: str, text: str) -> str:
    if text not in VERDICT_DETAILS:
        raise ValueError(f"{name} must be one of {', '.join(VERDICT_DETAILS)}, not {text!r}")
    return text


# -- the settings ---------------------------------------------------------------------------------


class _Settings:
    """What a command line needs of a settings dataclass to declare its options: each field's
    environment variable and default."""

    @classmethod
    def env_var(cls, name: str) -> str:
        """The environment variable of a setting: `ServeConfig.env_var("ttl_seconds")` is MCPSIM_TTL."""
        return {f.name: f.metadata["env"] for f in fields(cls) if "env" in f.metadata}[name]  # type: ignore[arg-type]

    @classmethod
    def default_of(cls, name: str) -> Any:
        """A setting's default value."""
        f = {f.name: f for f in fields(cls)}[name]  # type: ignore[arg-type]  # a subclass is a dataclass
        return f.default_factory() if f.default is MISSING and f.default_factory is not MISSING else f.default


@dataclass(frozen=True)
class ClientLimits(_Settings):
    """What one client may hold on the MCP endpoints (None: no limit). A client is its bearer
    token when it sends an Authorization header, else its remote address; the per-address limits
    also bound everyone behind one address together, so a client that changes its token on every
    request gains nothing past them."""

    sessions_per_client: int | None = _setting(256, "MCPSIM_SESSIONS_PER_CLIENT", _limit)
    sessions_per_address: int | None = _setting(1024, "MCPSIM_SESSIONS_PER_ADDRESS", _limit)
    # an idle session is closed after this many seconds
    session_idle_seconds: float | None = _setting(900.0, "MCPSIM_SESSION_IDLE_TIMEOUT", _seconds)
    # open sessions of one world, all clients together (the MCP SDK's own cap of a session manager)
    max_sessions: int | None = _setting(10_000, "MCPSIM_MAX_SESSIONS", _limit)
    # live episodes `/mcp` made for one client
    mcp_episodes_per_client: int | None = _setting(32, "MCPSIM_MCP_EPISODES_PER_CLIENT", _limit)
    mcp_episodes_per_address: int | None = _setting(128, "MCPSIM_MCP_EPISODES_PER_ADDRESS", _limit)
    # every HTTP connection (mcpsim.serve._connections): a request's headers, then its body, must
    # arrive within these many seconds; open connections from one remote address
    header_timeout_seconds: float | None = _setting(30.0, "MCPSIM_HEADER_TIMEOUT", _seconds)
    body_timeout_seconds: float | None = _setting(300.0, "MCPSIM_BODY_TIMEOUT", _seconds)
    connections_per_address: int | None = _setting(1024, "MCPSIM_CONNECTIONS_PER_ADDRESS", _limit)

    def __post_init__(self) -> None:
        for name in (
            "sessions_per_client",
            "sessions_per_address",
            "max_sessions",
            "mcp_episodes_per_client",
            "mcp_episodes_per_address",
            "connections_per_address",
        ):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a whole number of at least 1 (or None: no limit), not {value!r}")
        for name in ("session_idle_seconds", "header_timeout_seconds", "body_timeout_seconds"):
            seconds = getattr(self, name)
            if seconds is not None and not (isinstance(seconds, int | float) and 0 < seconds < float("inf")):
                raise ValueError(f"{name} must be a positive, finite number (or None), not {seconds!r}")


@dataclass
class ServeConfig(_Settings):
    """How `mcpsim serve --http` (and `servers/asgi.py`) run: the world behind `/mcp` and the
    limits of the control plane. Every installed world can be created over HTTP (or those `only` names)."""

    world: str = _setting("retail", "MCPSIM_WORLD", _text)
    # the worlds served, `world` among them (empty: every installed one)
    only: list[str] = _setting(None, "MCPSIM_ONLY", _words, factory=list)
    seed: int = _setting(0, "MCPSIM_SEED", _whole)
    scale: str = _setting("default", "MCPSIM_SCALE", _text)
    # None (and no_auth False): one is generated and printed to stderr
    token: str | None = _setting(None, "MCPSIM_TOKEN", _text)
    # the control plane open to anyone who reaches the server (local experiments)
    no_auth: bool = _setting(False, "MCPSIM_NO_AUTH", _flag)
    host: str = _setting("127.0.0.1", "MCPSIM_HOST", _text)
    # what mcp_urls are built from (None: the listening socket's address)
    public_url: str | None = _setting(None, "MCPSIM_PUBLIC_URL", _text)
    # full | summary (None: full with a token, summary without)
    verdict_detail: VerdictDetail | None = _setting(None, "MCPSIM_VERDICT_DETAIL", _verdict_detail)
    # `/mcp`: one episode shared by every client, not one per client
    shared_default: bool = _setting(False, "MCPSIM_SHARED_DEFAULT", _flag)
    max_episodes: int = _setting(DEFAULT_MAX_EPISODES, "MCPSIM_MAX_EPISODES", _at_least_one)
    max_episode_bytes: int | None = _setting(DEFAULT_MAX_EPISODE_BYTES, "MCPSIM_MAX_EPISODE_BYTES", _size)
    # one episode's database: a tool call writing past it gets a tool error, nothing changed
    max_bytes_per_episode: int | None = _setting(DEFAULT_MAX_BYTES_PER_EPISODE, "MCPSIM_MAX_BYTES_PER_EPISODE", _size)
    template_cache_bytes: int | None = _setting(DEFAULT_TEMPLATE_BYTES, "MCPSIM_TEMPLATE_CACHE_BYTES", _size)
    ttl_seconds: float | None = _setting(DEFAULT_TTL_SECONDS, "MCPSIM_TTL", _seconds)  # None: episodes never expire
    cache_dir: str | None = _setting(None, "MCPSIM_CACHE_DIR", _text)
    allowed_hosts: list[str] = _setting(None, "MCPSIM_ALLOWED_HOSTS", _words, factory=list)
    allowed_origins: list[str] = _setting(None, "MCPSIM_ALLOWED_ORIGINS", _words, factory=list)
    # write every episode's trajectory there when it ends
    record_dir: str | None = _setting(None, "MCPSIM_RECORD_DIR", _text)
    # fault profile of the default episode and of episodes created without one
    faults: str | None = _setting(None, "MCPSIM_FAULTS", _text)
    # profiles requests may name (--faults-dir)
    faults_dirs: list[str] = _setting(None, "MCPSIM_FAULTS_DIRS", _words, factory=list)
    # signs snapshots (None: a key generated per process)
    snapshot_key: str | None = _setting(None, "MCPSIM_SNAPSHOT_KEY", _text)
    # per-client MCP sessions and /mcp episodes (their variables are ClientLimits' fields')
    client_limits: ClientLimits = field(default_factory=ClientLimits)

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ServeConfig:
        """The configuration the environment describes: each field's variable (`.env_var`), unset
        or empty meaning the default. Sizes read like 4GiB; for limits, sizes and seconds 0 means
        no limit (MCPSIM_MAX_EPISODES, a cap that is always on, must be 1 or more); flags are 1/0
        or true/false; lists are space-separated."""
        return cls(**_read(cls, env, skip={"client_limits"}), client_limits=ClientLimits(**_read(ClientLimits, env)))


def _read(cls: type, env: Mapping[str, str], skip: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for f in fields(cls):
        if f.name in skip:
            continue
        text = env.get(f.metadata["env"], "")
        if text.strip():
            values[f.name] = f.metadata["read"](f.metadata["env"], text)
    return values


DEFAULTS = ServeConfig()
DEFAULT_LIMITS = ClientLimits()
