"""The episode lifecycle, below tasks and transports: `store` (raw SQLite: bookkeeping tables,
change triggers, meta, state hash), `query` (the where-DSL), `templates` (built once, cloned per
episode), `episode` (one private database, one transaction per call), `faults` (fault profiles),
`snapshots` (signed bytes and the validation of an upload), `textsafe` (text that cannot break
JSON)."""

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import (
    BUILTIN,
    FaultProfile,
    FaultProfileError,
    ScriptedFault,
    load_profile,
    profile_from_request,
)
from mcpsim.engine._parking import EpisodeClosed
from mcpsim.engine._query import row_matches, where_sql
from mcpsim.engine._snapshots import SnapshotError, load_untrusted, sign_episode, snapshot_key
from mcpsim.engine._store import (
    CallRecord,
    Change,
    IsoDatetime,
    NetChange,
    NetChanges,
    RowOp,
    connect,
    full_state_hash,
    net_changes,
    read_meta,
    rebase,
    write_meta,
)
from mcpsim.engine._templates import TemplateCache, process_templates
from mcpsim.engine._textsafe import lone_surrogate, scrub
from mcpsim.engine._transaction import CallResult

__all__ = [
    "BUILTIN",
    "CallRecord",
    "CallResult",
    "Change",
    "Episode",
    "EpisodeClosed",
    "FaultProfile",
    "FaultProfileError",
    "IsoDatetime",
    "NetChange",
    "NetChanges",
    "RowOp",
    "ScriptedFault",
    "SnapshotError",
    "TemplateCache",
    "connect",
    "full_state_hash",
    "load_profile",
    "load_untrusted",
    "lone_surrogate",
    "net_changes",
    "process_templates",
    "profile_from_request",
    "read_meta",
    "rebase",
    "row_matches",
    "scrub",
    "sign_episode",
    "snapshot_key",
    "where_sql",
    "write_meta",
]
