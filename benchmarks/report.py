"""Targets, growth with scale, and the markdown report, from the sections' results."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from benchmarks.common import ratio

TOOL_RATIO_TARGET = 1.25
CREATE_TARGET_MS = 1.0
GRADE_TARGET_MS = 5.0
MEMORY_TARGET_BYTES = 1 << 30  # 1 GiB for 1,000 live default-scale episodes
# Issue 15's targets, in bare no-op calls of CPU measured in the same run
GRADED_INPROCESS_NOOPS = 25
GRADED_HTTP_NOOPS = 70
READ_DIRECT_NOOPS = 1.0
READ_MCP_FACTOR = 1.25
RESET_TARGET_MS = 1.0
IDLE_TARGET_BYTES = 2 * 10**9  # 10,000 live, 100 active
ACTIVE_TARGET_BYTES = 10**9  # 1,000 active
# Issue 33: a search call within "a few" no-op calls of a read; a reset that stays a page copy
SEARCH_FEW_NOOPS = 5.0
RESET_PAGE_COPY_FACTOR = 1.5  # Episode.create over a bare deserialize of the same bytes
# Peers, CPU per graded tau-bench retail episode in bare no-op calls (issue 15, measured side by side)
PEERS = {"tau-bench v1": 700, "tau2": 660}


def _f(x: Any, digits: int = 2) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:,.{digits}f}"
    if isinstance(x, int):
        return f"{x:,}"
    return str(x)


def _mb(n: Any) -> str:
    return "-" if n is None else f"{n / 1e6:,.1f} MB"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    out += ["| " + " | ".join(_f(c) if not isinstance(c, str) else c for c in row) + " |" for row in rows]
    return "\n".join(out)


# A column: a row's key (also its heading), or a heading and the row's key or a function of the row
Column = str | tuple[str, "str | Callable[[dict[str, Any]], Any]"]


def _keyed_table(columns: list[Column], rows: Iterable[dict[str, Any]]) -> str:
    """A table whose cells are the rows' values under each column's key (or a function of the row)."""
    pairs = [(c, c) if isinstance(c, str) else c for c in columns]
    return _table(
        [heading for heading, _ in pairs],
        [[cell(r) if callable(cell) else r[cell] for _, cell in pairs] for r in rows],
    )


def _ran(results: dict[str, Any], section: str, measured: str) -> dict[str, Any]:
    """`results[section]` if it holds its `measured` figures (the section ran), else {}."""
    data = results.get(section, {})
    return data if data.get(measured) else {}


# -- targets -------------------------------------------------------------------------------------


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    tc = results.get("toolcalls", {}).get("transports", {})
    for transport, data in tc.items():
        for name in ("calculate", "read_simple", "read_order", "write_address"):
            v = data["variants"].get(name)
            if v is None:
                continue
            value = v.get("ratio_median")
            cpu = v.get("cpu", {}).get("ratio_median")
            out.append(
                {
                    "target": f"tool call within {TOOL_RATIO_TARGET}x of bare no-op",
                    "where": f"{transport}: {v['tool']}",
                    "value": f"{_f(value)}x ({_f(v['median_ms'])} vs {_f(data['variants']['noop']['median_ms'])} ms)"
                    + (f"; CPU {_f(cpu)}x" if cpu is not None else ""),
                    "ratio": value,
                    "cpu_ratio": cpu,
                    "met": value is not None and value <= TOOL_RATIO_TARGET,
                }
            )
    for row in results.get("creation", {}).get("creation", []):
        if row["scale"] != "default" or not row.get("create"):
            continue
        ms = row["create"]["median_ms"]
        out.append(
            {
                "target": f"episode creation < {CREATE_TARGET_MS:g} ms median (default scale)",
                "where": row["world"],
                "value": f"{_f(ms, 3)} ms (p99 {_f(row['create']['p99_ms'], 3)})",
                "met": ms < CREATE_TARGET_MS,
            }
        )
    for world, row in results.get("grading", {}).get("worlds", {}).items():
        s = row.get("steady_grade", {})
        if not s.get("n"):
            continue
        out.append(
            {
                "target": f"grading < {GRADE_TARGET_MS:g} ms median per task",
                "where": world,
                "value": f"{_f(s['median_ms'])} ms (p99 {_f(s['p99_ms'])})",
                "met": s["median_ms"] < GRADE_TARGET_MS,
            }
        )
    out += issue_targets(results.get("targets", {}))
    startup = results.get("startup", {})
    if startup.get("ratio_median") is not None:
        out.append(
            {
                "target": f"stdio start-up to the answer to initialize <= {startup['target_ratio']:g}x "
                "a bare SDK server",
                "where": f"template cached, {startup['rounds']} interleaved rounds",
                "value": f"{_f(startup['ratio_median'], 2)}x median (paired {_f(startup['ratio_paired'], 2)}x, "
                f"CPU {_f(startup['cpu_ratio_median'], 2)}x); "
                f"first tools/list {_f(startup['tools_list_ratio_median'], 2)}x",
                "met": bool(startup["met"]),
            }
        )
    out += research_targets(results.get("research", {}))
    for probe in results.get("memory", {}).get("probes", []):
        if probe["scale"] != "default":
            continue
        point = max(probe["points"], key=lambda p: p["episodes"])
        projected = point["per_episode_bytes"] * 1000
        measured = point["episodes"] >= 1000
        used = projected + probe.get("after_use", {}).get("extra_per_episode_bytes", 0) * 1000
        out.append(
            {
                "target": "1,000 live episodes < 1 GB",
                "where": probe["world"],
                "value": f"{_mb(projected)} fresh "
                f"({'measured' if measured else 'projected from ' + str(point['episodes'])}"
                f"); {_mb(used)} once used (projected)",
                "met": projected < MEMORY_TARGET_BYTES and used < MEMORY_TARGET_BYTES,
            }
        )
    return out


def research_targets(r: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 33's: the search call against a read and a no-op-like call; the reset of the largest
    corpus against a bare deserialize of its bytes."""
    s = r.get("summary")
    if not s:
        return []
    where = f"research, {s['scale']} ({s['documents']:,} documents), Episode.call CPU"
    reset = r["reset"]
    create = reset["variants"][f"research/{s['scale']}"]["cpu"]["median_ms"]
    return [
        {
            "target": f"research: search <= a read + {SEARCH_FEW_NOOPS:g} no-op calls (issue 33: 'a few')",
            "where": where,
            "value": f"search {_f(s['search_cpu_ms'], 3)} ms = {_f(s['search_noop_calls'], 1)} no-op calls; "
            f"read (open) {_f(s['read_noop_calls'], 1)}; search - read = "
            f"{_f(s['search_minus_read_noop_calls'], 1)} no-op calls",
            "met": s["search_minus_read_noop_calls"] is not None
            and s["search_minus_read_noop_calls"] <= SEARCH_FEW_NOOPS,
        },
        {
            "target": f"research: reset <= {RESET_PAGE_COPY_FACTOR:g}x a bare deserialize of its bytes (a page copy)",
            "where": f"research, {s['scale']} ({_mb(reset['research_bytes'])})",
            "value": f"{_f(create, 3)} ms CPU = {_f(reset['research_over_deserialize_cpu'])}x deserialize",
            "met": reset["research_over_deserialize_cpu"] is not None
            and reset["research_over_deserialize_cpu"] <= RESET_PAGE_COPY_FACTOR,
        },
    ]


def issue_targets(t: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 15's targets, each in bare no-op calls measured in the same section."""
    out: list[dict[str, Any]] = []
    graded = t.get("graded", {})
    for run in graded.get("runs", []):
        if run["concurrency"] != 1:
            continue
        limit = GRADED_INPROCESS_NOOPS if run["backend"] == "in-process" else GRADED_HTTP_NOOPS
        peers = ", ".join(f"{name} {n}" for name, n in PEERS.items())
        out.append(
            {
                "target": f"graded oracle episode <= {limit} bare no-op calls of CPU",
                "where": f"`mcpsim run` {run['backend']}",
                "value": f"{_f(run['noop_calls_per_episode'], 0)} no-op calls ({_f(run['cpu_ms_per_episode'])} ms CPU; "
                f"no-op {_f(run['noop_cpu_ms'], 3)} ms); peers: {peers}",
                "met": run["noop_calls_per_episode"] <= limit,
            }
        )
    for backend in ("in-process", "http"):
        runs = sorted((r for r in graded.get("runs", []) if r["backend"] == backend), key=lambda r: r["concurrency"])
        if len(runs) > 1:
            rates = [r["episodes_per_cpu_s"] for r in runs]
            out.append(
                {
                    "target": "episodes per CPU-second do not fall from concurrency 1 to 256",
                    "where": backend,
                    "value": ", ".join(f"c={r['concurrency']}: {_f(r['episodes_per_cpu_s'])}" for r in runs),
                    "met": min(rates[1:]) >= 0.9 * rates[0] and runs[-1]["concurrency"] >= 256,
                }
            )
    if reads := _ran(t, "reads", "tools"):
        out.append(
            {
                "target": f"retail read tools via Episode.call <= {READ_DIRECT_NOOPS:g} no-op call (median of tools)",
                "where": f"{len(reads['tools'])} read tools",
                "value": f"{_f(reads['median_direct_noop_calls'])} no-op calls "
                f"(no-op {_f(reads['noop_cpu_ms'], 3)} ms)",
                "met": reads["median_direct_noop_calls"] <= READ_DIRECT_NOOPS,
            }
        )
        out.append(
            {
                "target": f"read tools through MCP <= {READ_MCP_FACTOR}x (no-op + Episode.call)",
                "where": "in memory (worst tool)",
                "value": f"{_f(reads['max_mcp_over_noop_plus_direct'], 3)}x",
                "met": reads["max_mcp_over_noop_plus_direct"] <= READ_MCP_FACTOR,
            }
        )
    if reset := _ran(t, "reset", "rows"):
        ms = reset["median_task_reset_cpu_ms"]
        out.append(
            {
                "target": f"reset (a task's episode, ready for its first call) <= {RESET_TARGET_MS:g} ms median",
                "where": "retail, default scale",
                "value": f"{_f(ms, 3)} ms CPU; its first call {_f(reset['median_task_first_call_cpu_ms'], 3)} ms",
                "met": ms <= RESET_TARGET_MS,
            }
        )
    for key, probe in t.items():
        if not key.startswith("idle "):
            continue
        if probe["active"] < probe["total"]:
            target, limit, rss = "10,000 live episodes, 100 active, < 2 GB", IDLE_TARGET_BYTES, probe["rss_delta_bytes"]
            scaled = rss
            note = "" if probe["total"] == 10_000 else " (quick mode: fewer live episodes than the target's)"
        else:
            target, limit = "1,000 active episodes < 1 GB", ACTIVE_TARGET_BYTES
            scaled = probe["per_episode_bytes"] * 1000
            note = f" (projected from {probe['total']} measured)"
        out.append(
            {
                "target": target,
                "where": f"retail: {probe['total']:,} live, {probe['active']:,} active",
                "value": f"{_mb(scaled)}{note}; parked episode {_mb(probe['parked_bytes_median'])}; "
                f"park {_f(probe['park_cpu_ms'], 2)} ms, rebuild {_f(probe['rebuild_cpu_ms'], 2)} ms CPU; "
                f"same state hash {probe['same_hash']}/{probe['sampled']}",
                "met": scaled < limit and probe["same_hash"] == probe["sampled"] and probe["total"] >= 1000,
            }
        )
    return out


def _issue_section(t: dict[str, Any]) -> list[str]:
    parts = [
        "Every figure in bare no-op calls of CPU measured in the same section (`benchmarks/targets.py`): "
        "a bare MCP SDK server's async no-op tool, called by the SDK `Client` in memory (the issue's unit, "
        "in which the peers were measured; the same-transport column divides by the bare no-op over HTTP). "
        "CPU is the process's (client and server both run in it).\n"
    ]
    if graded := _ran(t, "graded", "runs"):
        parts.append(
            f"Graded oracle episodes through `run_episodes` (what `mcpsim run` runs: task episode, tools, "
            f"policy, the gold calls over MCP, grading, the trajectory written and fsynced), "
            f"{graded['tasks']} retail tasks"
            + (
                f", each level run {repeats} times (the figures of the run with the median CPU per episode;"
                " episodes and errors summed)"
                if (repeats := max(r.get("repeats", 1) for r in graded["runs"])) > 1
                else ""
            )
            + ":\n"
        )
        parts.append(
            _keyed_table(
                [
                    "backend",
                    "concurrency",
                    "episodes",
                    ("CPU ms / episode", "cpu_ms_per_episode"),
                    ("in-memory no-op CPU ms", "noop_cpu_ms"),
                    ("in-memory no-op calls / episode", "noop_calls_per_episode"),
                    ("same-transport no-op calls / episode", lambda r: r.get("transport_noop_calls_per_episode")),
                    ("episodes / CPU-s", "episodes_per_cpu_s"),
                    ("pass@1", "pass_at_1"),
                    "errors",
                ],
                graded["runs"],
            )
        )
    if reads := _ran(t, "reads", "tools"):
        parts.append(
            f"\nRetail read tools: every read call of the gold solutions ({reads['calls']} calls), on task "
            "episodes, through `Episode.call`, through MCP in memory, and bare no-op calls, in blocks, "
            "round after round:\n"
        )
        parts.append(
            _keyed_table(
                [
                    "tool",
                    "n",
                    ("Episode.call CPU ms", "direct_cpu_ms"),
                    ("in no-op calls", "direct_noop_calls"),
                    ("MCP CPU ms", "mcp_cpu_ms"),
                    ("MCP / (no-op + Episode.call)", "mcp_over_noop_plus_direct"),
                ],
                reads["tools"],
            )
        )
    if reset := _ran(t, "reset", "rows"):
        parts.append("\nReset: an episode of a task (`task_episode`), and a plain `Episode.create` at each scale:\n")
        parts.append(
            _table(
                ["scale", "task", "setup actions", "reset CPU ms", "first call CPU ms"],
                [
                    [r["scale"], r["task"], r["setup_actions"], r["reset_cpu_ms"], r["first_call_cpu_ms"]]
                    for r in reset["rows"]
                ],
            )
        )
    idle = [(k, v) for k, v in t.items() if k.startswith("idle ")]
    if idle:
        parts.append(
            "\nThe idle-episode store (`benchmarks/idle_probe.py`, a fresh process): an `EpisodeManager` with "
            "`max_active` open episodes hosts the live ones, each used once (a write and a read, through "
            "`manager.get`); past `max_active` the least recently used are parked. RSS delta after gc and "
            "`malloc_trim` (before it in brackets); park and rebuild: median CPU of one; state hashes compared "
            "before parking and after the rebuild:\n"
        )
        parts.append(
            _keyed_table(
                [
                    ("live", "total"),
                    "active",
                    "parked",
                    ("RSS delta", lambda p: f"{_mb(p['rss_delta_bytes'])} ({_mb(p['rss_delta_before_trim_bytes'])})"),
                    ("per live episode", lambda p: _mb(p["per_episode_bytes"])),
                    ("parked episode (median)", lambda p: _mb(p["parked_bytes_median"])),
                    ("park CPU ms", "park_cpu_ms"),
                    ("rebuild CPU ms", "rebuild_cpu_ms"),
                    ("same hash", lambda p: f"{p['same_hash']}/{p['sampled']}"),
                    ("fill CPU s", "fill_cpu_s"),
                ],
                [p for _, p in idle],
            )
        )
    return parts


# -- growth with scale -----------------------------------------------------------------------------


def scaling(results: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    creation = {(r["world"], r["scale"]): r for r in results.get("creation", {}).get("creation", [])}
    templates = {(t["world"], t["scale"]): t for t in results.get("creation", {}).get("templates", [])}
    for (world, scale), t in sorted(templates.items()):
        if scale != "large" or (world, "default") not in templates:
            continue
        d = templates[(world, "default")]
        bytes_ratio = ratio(t["bytes"], d["bytes"])
        rows.append(
            {
                "figure": f"{world}: template bytes",
                "default": _mb(d["bytes"]),
                "large": _mb(t["bytes"]),
                "ratio": bytes_ratio,
                "expected": "-",
            }
        )
        rows.append(
            {
                "figure": f"{world}: template build",
                "default": f"{_f(d['build_s'])} s",
                "large": f"{_f(t['build_s'])} s",
                "ratio": ratio(t["build_s"], d["build_s"]),
                "expected": "grows with rows generated",
            }
        )
        c, cd = creation.get((world, "large")), creation.get((world, "default"))
        if c and cd and c.get("create") and cd.get("create"):
            rows.append(
                {
                    "figure": f"{world}: episode creation (median)",
                    "default": f"{_f(cd['create']['median_ms'], 3)} ms",
                    "large": f"{_f(c['create']['median_ms'], 3)} ms",
                    "ratio": ratio(c["create"]["median_ms"], cd["create"]["median_ms"]),
                    "expected": f"<= bytes ratio ({_f(bytes_ratio)})",
                }
            )
    inmem = results.get("toolcalls", {}).get("transports", {}).get("inmemory", {}).get("variants", {})
    for name, v in inmem.items():
        if "@large" not in name:
            continue
        base = inmem.get(name.split("@")[0])
        if base:
            rows.append(
                {
                    "figure": f"retail: {v['tool']} in memory (median)",
                    "default": f"{_f(base['median_ms'], 3)} ms",
                    "large": f"{_f(v['median_ms'], 3)} ms",
                    "ratio": ratio(v["median_ms"], base["median_ms"]),
                    "expected": "1 (no growth)",
                }
            )
    g = results.get("grading", {}).get("scaling", {}).get("scales", {})
    if "default" in g and "large" in g:
        for key, label in (
            ("steady_grade", "grading (synthetic task, steady)"),
            ("state_hash", "of which: state hash"),
        ):
            a, b = g["default"][key], g["large"][key]
            rows.append(
                {
                    "figure": f"retail: {label}",
                    "default": f"{_f(a['median_ms'])} ms",
                    "large": f"{_f(b['median_ms'])} ms",
                    "ratio": ratio(b["median_ms"], a["median_ms"]),
                    "expected": "1 (no growth)" if key == "steady_grade" else "-",
                }
            )
    mem = {(p["world"], p["scale"]): p for p in results.get("memory", {}).get("probes", [])}
    for (world, scale), p in sorted(mem.items()):
        if scale != "large" or (world, "default") not in mem:
            continue
        a = max(mem[(world, "default")]["points"], key=lambda x: x["episodes"])["per_episode_bytes"]
        b = max(p["points"], key=lambda x: x["episodes"])["per_episode_bytes"]
        d = templates.get((world, "default"), {}).get("bytes")
        t = templates.get((world, "large"), {}).get("bytes")
        rows.append(
            {
                "figure": f"{world}: resident memory per episode",
                "default": _mb(a),
                "large": _mb(b),
                "ratio": ratio(b, a),
                "expected": f"bytes ratio ({_f(ratio(t, d))})",
            }
        )
    return rows


# -- markdown ----------------------------------------------------------------------------------------


def markdown(report: dict[str, Any]) -> str:
    m = report["meta"]
    parts: list[str] = []
    parts.append(
        f"Generated by `{m['command']}` on {m['started']} ({'quick' if m['quick'] else 'full'} mode, "
        f"{_f(m['duration_s'], 0)} s). Raw figures: `{m['json']}`."
    )

    older = {k: v for k, v in m.get("sections_from", {}).items() if v != m["started"]}
    if older:
        parts.append(
            "Sections carried over from earlier runs (`--merge`), measured on the tree of their own run: "
            + ", ".join(f"{name} ({started})" for name, started in older.items())
            + ".\n"
        )

    for heading, write in _SECTION_WRITERS.items():
        body = write(report)
        if body is not None:
            parts.append(("\n" if heading != SECTIONS[0] else "") + f"### {heading}\n")
            parts += body
    return "\n".join(parts) + "\n"


# Each section of the markdown: its lines under its heading (None: no heading either).


def _machine_section(report: dict[str, Any]) -> list[str]:
    m = report["meta"]
    mi = m["machine"]
    v = mi["versions"]
    return [
        _table(
            ["", ""],
            [
                ["CPU", f"{mi['cpu_model']}, {mi['cores']} cores ({mi['cores_usable']} usable)"],
                ["Memory", _mb(mi["memory_total_bytes"])],
                ["OS", mi["os"]],
                ["Python", f"{mi['python']} ({mi['python_implementation']})"],
                ["SQLite", mi["sqlite"]],
                ["mcp / mcp-types", f"{v.get('mcp')} / {v.get('mcp-types')}"],
                [
                    "SQLAlchemy / SQLModel / pydantic",
                    f"{v.get('sqlalchemy')} / {v.get('sqlmodel')} / {v.get('pydantic')}",
                ],
                [
                    "anyio / starlette / uvicorn / jsonschema",
                    (f"{v.get('anyio')} / {v.get('starlette')} / {v.get('uvicorn')} / {v.get('jsonschema')}"),
                ],
                [
                    "mcpsim",
                    (
                        f"{v.get('mcpsim')} at {mi['mcpsim_path']}, commit {mi['git_commit']} "
                        f"({mi['git_dirty_files']} files changed or new)"
                    ),
                ],
                ["load average (1, 5, 15 min)", f"start {mi['loadavg_start']}, end {m.get('loadavg_end')}"],
            ],
        )
    ]


def _targets_section(report: dict[str, Any]) -> list[str]:
    return [
        "Reported, not asserted. A ratio compares medians measured side by side in the same loop.\n",
        _table(
            ["target", "where", "measured", "met"],
            [[t["target"], t["where"], t["value"], "yes" if t["met"] else "**no**"] for t in report["targets"]],
        ),
    ]


def _issue_targets_section(report: dict[str, Any]) -> list[str] | None:
    t = report["sections"].get("targets")
    return _issue_section(t) if t else None


def _toolcalls_section(report: dict[str, Any]) -> list[str]:
    tc = _ran(report["sections"], "toolcalls", "transports")
    if not tc:
        return []
    any_t = next(iter(tc["transports"].values()))
    parts = [
        f"SDK `Client`, {any_t['client_mode']}; per variant "
        f"{any_t['rounds']} rounds x {any_t['calls_per_round']} calls after {any_t['warmup_calls']} warm-up "
        "calls, variants interleaved round by round in rotating order. Ratio: median over the bare no-op's "
        "median; paired: median of the per-round ratios. CPU: process CPU time per call, both ends "
        "(in memory and HTTP run client and server in this process), much less disturbed by other load "
        "on the machine than wall time.\n"
    ]
    for name, (tool, what) in ((k, (x["tool"], x["what"])) for k, x in tc["tools"].items()):
        parts.append(f"- `{name}` = `{tool}`: {what}")
    for transport, data in tc["transports"].items():
        parts.append(f"\n#### {transport}\n")
        rows = []
        for name, s in data["variants"].items():
            cpu = s.get("cpu", {})
            rows.append(
                [
                    name,
                    s["tool"],
                    s["scale"],
                    s["n"],
                    s["median_ms"],
                    s["p99_ms"],
                    s.get("ratio_median"),
                    s.get("ratio_paired"),
                    s.get("ratio_p99"),
                    cpu.get("median_ms"),
                    cpu.get("ratio_median"),
                    s.get("error", "")[:80],
                ]
            )
        parts.append(
            _table(
                [
                    "variant",
                    "tool",
                    "scale",
                    "n",
                    "median ms",
                    "p99 ms",
                    "ratio",
                    "ratio (paired)",
                    "p99 ratio",
                    "CPU ms",
                    "CPU ratio",
                    "error",
                ],
                rows,
            )
        )
        if data.get("setup"):
            parts.append("\nStart-up: " + ", ".join(f"{k} {v}" for k, v in data["setup"].items()))
    return parts


def _creation_section(report: dict[str, Any]) -> list[str]:
    cr = report["sections"].get("creation", {})
    if not cr:
        return []
    return [
        "Template: built once per (world, version, seed, scale) by a fresh `TemplateCache` (includes "
        "its atomic write to the disk cache); disk load: a second fresh cache reading that file. "
        "Creation: `Episode.create` from the in-memory cache, interleaved with two baselines on the "
        "same bytes: `deserialize` alone, and `deserialize` + the first query (SQLite parses the "
        "schema then).\n",
        _table(
            ["world", "scale", "bytes", "schema objects (triggers)", "build s", "disk load ms"],
            [
                [
                    t["world"],
                    t["scale"],
                    _mb(t["bytes"]),
                    (
                        f"{sum(x['count'] for x in t['schema'].values())} "
                        f"({t['schema'].get('trigger', {}).get('count', 0)})"
                    ),
                    t["build_s"] if t["built"] else "cached",
                    t["disk_load_ms"],
                ]
                for t in cr["templates"]
            ],
        ),
        "",
        _table(
            [
                "world",
                "scale",
                "create median ms",
                "create p99 ms",
                "deserialize ms",
                "+ first query ms",
                "schema parse ms",
                "create ms per MB",
                "n",
            ],
            [
                [
                    c["world"],
                    c["scale"],
                    c["create"].get("median_ms"),
                    c["create"].get("p99_ms"),
                    c["deserialize"].get("median_ms"),
                    c["deserialize_first_query"].get("median_ms"),
                    c["schema_parse_ms"],
                    c["create_ms_per_mb"],
                    c["create"].get("n"),
                ]
                for c in cr["creation"]
            ],
        ),
    ]


def _grading_section(report: dict[str, Any]) -> list[str]:
    gr = report["sections"].get("grading", {})
    if not gr:
        return []
    parts = [
        "`Verifier.grade` on oracle-solved task episodes (`task_episode` + `run_actions(task.gold)`), "
        "with the oracle's answer. First grade: the task's first, which replays its gold solution on a "
        "fresh task episode; steady: later grades of the same task. The state hash that every verdict "
        "carries is also timed alone.\n"
    ]
    rows = []
    for world, g in gr.get("worlds", {}).items():
        rows.append(
            [
                world,
                f"{g['graded']}/{g['tasks']}",
                g["first_grade"].get("median_ms"),
                g["first_grade"].get("p99_ms"),
                g["steady_grade"].get("median_ms"),
                g["steady_grade"].get("p99_ms"),
                g["state_hash"].get("median_ms"),
                g["task_template_build"].get("median_ms"),
                len(g["failed"]),
            ]
        )
    parts.append(
        _table(
            [
                "world",
                "tasks graded",
                "first grade median ms",
                "first p99 ms",
                "steady median ms",
                "steady p99 ms",
                "state hash ms",
                "task template build ms",
                "problems",
            ],
            rows,
        )
    )
    problems = [(w, f) for w, g in gr.get("worlds", {}).items() for f in g["failed"]]
    if problems:
        parts.append("\nProblems: " + "; ".join(f"{w}/{f['task']}: {f['error']}" for w, f in problems[:10]))
    sc = gr.get("scaling")
    if sc:
        parts.append(f"\nThe same synthetic retail task at each scale ({sc['task']}):\n")
        parts.append(
            _table(
                ["scale", "first grade ms", "steady median ms", "steady p99 ms", "state hash ms", "passed"],
                [
                    [
                        s,
                        x["first_grade_ms"],
                        x["steady_grade"]["median_ms"],
                        x["steady_grade"]["p99_ms"],
                        x["state_hash"]["median_ms"],
                        "yes" if x["passed"] else f"no: {x['failure']}",
                    ]
                    for s, x in sc["scales"].items()
                ],
            )
        )
    return parts


def _e2e_section(report: dict[str, Any]) -> list[str]:
    e2e = _ran(report["sections"], "e2e", "runs")
    if not e2e:
        return []
    return [
        f"`run_episodes` with the oracle agent and scripted user on {e2e['tasks']} retail tasks, trials "
        f"per concurrency {_trials(e2e['trials'])}, {e2e['rounds']} round(s) alternating backends and "
        "concurrencies after a warm-up (task templates, gold replays). HTTP: `create_app` + "
        "`serve_in_thread` in this process. CPU: process CPU per episode (both ends).\n",
        _table(
            [
                "backend",
                "concurrency",
                "episodes",
                "episodes/s (median)",
                "runs",
                "CPU ms/episode",
                "tool calls/episode",
                "pass@1",
                "errors",
            ],
            [
                [
                    x["backend"],
                    x["concurrency"],
                    x["episodes"],
                    x["episodes_per_s"],
                    ", ".join(_f(y) for y in x["episodes_per_s_runs"]),
                    x["cpu_ms_per_episode"],
                    x["tool_calls_per_episode"],
                    x["pass_at_1"],
                    x["errors"],
                ]
                for x in e2e["runs"]
            ],
        ),
    ]


def _memory_section(report: dict[str, Any]) -> list[str]:
    mem = _ran(report["sections"], "memory", "probes")
    if not mem:
        return []
    rows = []
    for p in mem["probes"]:
        for point in p["points"]:
            rows.append(
                [
                    p["world"],
                    p["scale"],
                    point["episodes"],
                    _mb(point["delta_bytes"]),
                    _mb(point["per_episode_bytes"]),
                    _mb(p["template_bytes"]),
                    ratio(point["per_episode_bytes"], p["template_bytes"]),
                    _mb(p["after_use"]["extra_per_episode_bytes"]),
                ]
            )
    return [
        f"{mem['method']}. After use: the extra RSS per episode once 10 of them were used (retail: "
        "get_order_details, add_customer_address and a state hash; other worlds: a state hash, which "
        "reads every row as grading does).\n",
        _table(
            [
                "world",
                "scale",
                "live episodes",
                "RSS delta",
                "per episode",
                "template bytes",
                "per episode / bytes",
                "+ per episode after use",
            ],
            rows,
        ),
    ]


def _scaling_section(report: dict[str, Any]) -> list[str]:
    rows = report.get("scaling", [])
    if not rows:
        return ["Not measured in this mode (the large scale is measured in full mode only)."]
    return [
        _table(
            ["figure", "default", "large", "large / default", "expected"],
            [[x["figure"], x["default"], x["large"], x["ratio"], x["expected"]] for x in rows],
        )
    ]


def _profiles_section(report: dict[str, Any]) -> list[str]:
    r = report["sections"]
    pr = _ran(r, "profiles", "profiles")
    if not pr:
        return []
    parts = [
        "pyinstrument (wall clock, sampling every "
        f"{pr['interval_s'] * 1e3:g} ms); each frame's own time is attributed to the nearest enclosing "
        "subsystem. The profiler slows code down, so read the shares; the est. ms column applies a share "
        "to the unprofiled in-memory median above. Full call trees: `benchmarks/results/profile-*.txt`.\n"
    ]
    medians = {
        f"inmemory-{k}": s["median_ms"]
        for k, s in r.get("toolcalls", {}).get("transports", {}).get("inmemory", {}).get("variants", {}).items()
    }
    create_median = next(
        (
            c["create"].get("median_ms")
            for c in r.get("creation", {}).get("creation", [])
            if c["world"] == "retail" and c["scale"] == "default"
        ),
        None,
    )
    grade_median = r.get("grading", {}).get("worlds", {}).get("retail", {}).get("steady_grade", {}).get("median_ms")
    medians["create"], medians["grade"] = create_median, grade_median
    for name, p in pr["profiles"].items():
        base = medians.get(name)
        if name == "create" and base:  # the profile also holds close(); the median does not
            closing = sum(b["share"] for b in p["breakdown"] if b["bucket"] == "create.close")
            base = base / max(0.01, 1 - closing)
        parts.append(f"\n#### {name}: {p['what']} ({p['calls']} calls, `{p['file']}`)\n")
        parts.append(
            _table(
                ["share", "est. ms", "subsystem"],
                [
                    [
                        f"{b['share'] * 100:.1f}%",
                        round(b["share"] * base, 3) if base and b["bucket"] != "create.close" else "-",
                        b["what"],
                    ]
                    for b in p["breakdown"]
                    if b["share"] >= 0.005
                ],
            )
        )
    return parts


def _research_section(report: dict[str, Any]) -> list[str]:
    r = _ran(report["sections"], "research", "summary")
    if not r:
        return []
    s, b, reset, calls = r["summary"], r["build"], r["reset"], r["calls"]
    parts = [
        "`benchmarks/research.py`. Corpus: each scale's template built once by a template cache of its "
        "own (CPU seconds); the largest then loaded back from the disk cache by fresh caches (median of 5).\n",
        _keyed_table(
            [
                "scale",
                "documents",
                ("template", lambda c: _mb(c["bytes"])),
                ("build CPU s", "build_cpu_s"),
            ],
            r["corpus"],
        ),
        f"\nLargest: {b['scale']}, {b['documents']:,} documents "
        f"({'at least' if b['reaches_target'] else '**fewer than**'} the issue's 10,000): built in "
        f"{_f(b['build_cpu_s'])} s CPU once; loaded from the template cache in {_f(b['disk_load_cpu_ms'])} ms CPU "
        f"({_f(b['build_over_load_cpu'], 0)}x less).\n",
        "Reset: `Episode.create` from the cached template, interleaved with retail's at the default scale "
        "and a bare `deserialize` of the same research bytes (the page copy: it grows with the bytes, "
        "not with anything else); CPU per create:\n",
        _table(
            ["variant", "bytes", "n", "CPU median ms", "CPU p99 ms", f"/ {reset['baseline']}"],
            [
                [
                    name,
                    _mb(reset.get("retail_bytes") if name.startswith("retail") else reset["research_bytes"]),
                    v["n"],
                    _f(v["cpu"]["median_ms"], 3),
                    _f(v["cpu"]["p99_ms"], 3),
                    v["cpu"].get("ratio_median"),
                ]
                for name, v in reset["variants"].items()
            ],
        ),
        f"\nTool calls: `Episode.call` in process, {calls['rounds']} rounds x {calls['calls_per_round']} calls per "
        "variant, interleaved in rotating order, each round on fresh episodes (first query and the "
        "find_in_page documents' opening untimed). Queries: a document's first two title words and a word "
        "of its body, drawn with a fixed seed from each scale's corpus; a query's words are OR-ed "
        "(`match_expression`). No-op calls: CPU over `calculate`'s.\n",
        _keyed_table(
            [
                ("variant", lambda v: v["name"]),
                "tool",
                "scale",
                "n",
                ("median ms", lambda v: _f(v["median_ms"], 3)),
                ("CPU ms", lambda v: _f(v["cpu"]["median_ms"], 3)),
                ("no-op calls (CPU)", "noop_calls"),
                ("paired", lambda v: v["cpu"].get("ratio_paired")),
                ("CPU µs per matching document", lambda v: v.get("cpu_us_per_match")),
                ("error", lambda v: v.get("error", "")[:80]),
            ],
            [{"name": k, **v} for k, v in calls["variants"].items()],
        ),
        "\nMatching documents per query (median): "
        + ", ".join(f"{scale} {_f(q['matches_median'], 0)}" for scale, q in calls["queries"].items())
        + f".\n\nAt {s['scale']} ({s['documents']:,} documents): **search = {_f(s['search_noop_calls'], 1)} no-op "
        f"calls** ({_f(s['search_cpu_ms'], 3)} ms CPU; search_newest {_f(s['search_newest_noop_calls'], 1)}); "
        f"a read (`open`) = {_f(s['read_noop_calls'], 1)}; **search / read = {_f(s['search_over_read'], 1)}**; "
        f"search - read = {_f(s['search_minus_read_noop_calls'], 1)} no-op calls. Search grows with the "
        "documents a query matches: FTS5 scores every match with bm25 to rank them (no top-k pruning).",
    ]
    return parts


def _skipped_section(report: dict[str, Any]) -> list[str]:
    skipped = report.get("skipped", [])
    return ["\n".join(f"- {s['section']}: {s['what']}: {s['why']}" for s in skipped) if skipped else "Nothing."]


_SECTION_WRITERS: dict[str, Callable[[dict[str, Any]], list[str] | None]] = {
    "Machine and run": _machine_section,
    "Targets": _targets_section,
    "Issue 15: costs in bare no-op calls": _issue_targets_section,
    "Tool-call round trips": _toolcalls_section,
    "Templates and episode creation": _creation_section,
    "Grading": _grading_section,
    "Oracle episodes per second": _e2e_section,
    "Resident memory": _memory_section,
    "Growth with scale": _scaling_section,
    "Profiles": _profiles_section,
    "Research world: search cost": _research_section,
    "Skipped": _skipped_section,
}
SECTIONS = list(_SECTION_WRITERS)
"""The report's headings, in order: each section's lines come from its writer."""


def _trials(trials: dict) -> str:
    """`{1: 1, 16: 2}` whether the keys are numbers (this run) or texts (a run merged from JSON)."""
    return "{" + ", ".join(f"{int(k)}: {v}" for k, v in sorted(trials.items(), key=lambda kv: int(kv[0]))) + "}"
