"""Schema-driven fuzzing (bounded, seeded, loopback only): every tool of every installed world is
called with malformed and edge inputs derived from its JSON schema (missing required fields, wrong
types, out-of-range numbers, 100 KB strings, Unicode edge cases, nulls, extra fields, nested
garbage) and a few schema-valid random inputs, in process (`Episode.call`) and over real MCP on a
loopback server; every control-plane route gets malformed, oversized, deeply nested and
non-finite bodies, unknown ids and wrong methods.

Asserted: no call raises, no call flags the episode (a simulator bug), every rejected call leaves
the state hash unchanged, HTTP never answers 5xx, and every control-plane refusal is a 4xx with a
JSON error body. The case counts are seeded and capped so the file runs in about a minute."""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, MCPError

from mcpsim.engine._episode import Episode
from mcpsim.engine._faults import BUILTIN
from mcpsim.serve._control import MAX_BODY_BYTES
from mcpsim.trajectories._served import episode_trajectory
from mcpsim.world import World
from mcpsim.world._registry import load_world, world_names

pytestmark = pytest.mark.anyio

SEED = 11
WORLDS = world_names()
HUGE = "A" * 100_000  # 100 KB
UNICODE_EDGES = [
    "",
    " ",
    "\x00",
    "nul\x00byte",
    "\u202eRTL override",
    "\u200b\u200d\ufeff",
    "e\u0301\u0301\u0301",
    "\U0001f4a9\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "\U0010ffff\ufffe\uffff",
    "\r\n\t\x1b[31m",
    "'; DROP TABLE customer; --",
    "%s%n{0}{{}}",
    "../../etc/passwd",
    "Ω≈ç√∫˜µ≤≥÷" * 50,
]
# Candidates for string fields with a pattern (a value is used when it matches the pattern).
PATTERN_SAMPLES = [
    "CA",
    "NY",
    "94107",
    "2024-05-01",
    "2024-13-45",
    "2024-05",
    "2024-05-01T09:30",
    "ada@example.com",
    "MRD104",
    "ABC",
    "AB12CD",
    "1234",
    "123456789",
    "12345678901",
    "+1 (555) 010-0000",
    "posted",
    "pending",
    "cancelled",
    "token",
    "0000",
]


# -- schema-driven inputs ---------------------------------------------------------------------------------


def deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = root["$defs"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def branches(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    schema = deref(schema, root)
    if "anyOf" in schema:
        return [deref(b, root) for b in schema["anyOf"]]
    return [schema]


def known_ids(episode: Episode) -> dict[str, list[str]]:
    """Real values by column name (and `<table>_id` for each table's `id`), so that valid inputs
    reach past the lookups into the tools' logic."""
    found: dict[str, set[str]] = {}
    for table, rows in episode.tables(limit=60).items():
        for row in rows:
            for column, value in row.items():
                if isinstance(value, str) and 0 < len(value) <= 40:
                    found.setdefault(column, set()).add(value)
                    if column == "id":
                        found.setdefault(f"{table}_id", set()).add(value)
    return {k: sorted(v) for k, v in found.items()}


class Gen:
    def __init__(self, rng: random.Random, ids: dict[str, list[str]]) -> None:
        self.rng, self.ids = rng, ids

    def string(self, schema: dict[str, Any], name: str) -> str:
        lo, hi = schema.get("minLength", 0), schema.get("maxLength", 40)

        def fits(text: str) -> bool:
            return lo <= len(text) <= hi

        if (pattern := schema.get("pattern")) is not None:
            matching = [s for s in PATTERN_SAMPLES if re.search(pattern, s) and fits(s)]
            if matching:
                return self.rng.choice(matching)
        pool = [v for v in self.ids.get(name, []) + self.ids.get(name.removesuffix("s"), []) if fits(v)]
        if pool and self.rng.random() < 0.85:
            return self.rng.choice(pool)
        size = self.rng.randint(lo, max(lo, min(hi, 24)))
        return "".join(self.rng.choice("abcdefghij klmnop_0123") for _ in range(size))

    def valid(self, schema: dict[str, Any], root: dict[str, Any], name: str = "") -> Any:
        options = branches(schema, root)
        non_null = [b for b in options if b.get("type") != "null"]
        s = (
            self.rng.choice(non_null)
            if non_null and (len(non_null) == len(options) or self.rng.random() < 0.7)
            else options[0]
            if not non_null
            else {"type": "null"}
        )
        if "enum" in s:
            return self.rng.choice(s["enum"])
        if "const" in s:
            return s["const"]
        kind = s.get("type")
        if kind == "string":
            return self.string(s, name)
        if kind in ("integer", "number"):
            lo = s.get("minimum", s.get("exclusiveMinimum", -1) + 1)
            hi = s.get("maximum", s.get("exclusiveMaximum", lo + 101) - 1)
            value = self.rng.randint(int(lo), int(max(lo, min(hi, lo + 100))))
            return value if kind == "integer" else value + 0.25 * (value < hi)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if kind == "null":
            return None
        if kind == "array":
            lo, hi = s.get("minItems", 0), s.get("maxItems", 3)
            return [
                self.valid(s.get("items", {"type": "string"}), root, name)
                for _ in range(self.rng.randint(lo, max(lo, min(hi, 3))))
            ]
        if kind == "object" or "properties" in s:
            return self.object(s, root)
        return "x"

    def object(self, schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get("required", []))
        return {
            name: self.valid(prop, root, name)
            for name, prop in schema.get("properties", {}).items()
            if name in required or self.rng.random() < 0.5
        }

    def wrong_values(self, schema: dict[str, Any], root: dict[str, Any]) -> list[tuple[str, Any]]:
        kinds = {b.get("type") for b in branches(schema, root)}
        s = next((b for b in branches(schema, root) if b.get("type") != "null"), deref(schema, root))
        nested: Any = "bottom"
        for _ in range(60):
            nested = {"a": [nested]}
        values: list[tuple[str, Any]] = [
            ("null", None),
            ("list", [1, "two", None]),
            ("object", {"k": {"k": [{}]}}),
            ("nested60", nested),
        ]
        if "string" in kinds:
            values += [
                ("int", 7),
                ("float", 1.5),
                ("bool", True),
                ("huge", HUGE),
                *((f"unicode{i}", u) for i, u in enumerate(self.rng.sample(UNICODE_EDGES, 4))),
            ]
            if "maxLength" in s:
                values.append(("too_long", "x" * (s["maxLength"] + 1)))
        else:
            values += [("string", "12"), ("huge_string", HUGE), ("unicode", self.rng.choice(UNICODE_EDGES))]
        if kinds & {"integer", "number"}:
            values += [
                ("float", 2.5),
                ("big", 2**63),
                ("small", -(2**63) - 1),
                ("huge_int", 10**40),
                ("e308", 1e308),
                ("neg", -1),
                ("zero", 0),
            ]
            if "minimum" in s:
                values.append(("below_min", s["minimum"] - 1))
            if "maximum" in s:
                values.append(("above_max", s["maximum"] + 1))
        if "array" in kinds:
            item = s.get("items", {"type": "string"})
            values += [
                ("scalar", "x"),
                ("garbage_items", [None, 3, {"zz": 1}]),
                ("too_many", [self.valid(item, root) for _ in range(s.get("maxItems", 50) + 1)]),
                ("empty", []),
            ]
        if "boolean" in kinds:
            values += [("yes", "yes"), ("two", 2)]
        return values


def fuzz_cases(
    world: World, tool: str, rng: random.Random, ids: dict[str, list[str]], *, budget: int, valid: int
) -> list[tuple[str, Any, bool]]:
    """(label, arguments, json_safe) for one tool: every missing-required case, an extra field,
    garbage top levels, a seeded sample of wrong values per field, and `valid` valid inputs."""
    schema = world.tools[tool].input_schema()
    gen = Gen(rng, ids)
    base = gen.object(schema, schema)
    full = {**base, **{n: gen.valid(p, schema, n) for n, p in schema.get("properties", {}).items()}}
    cases: list[tuple[str, Any, bool]] = [
        ("empty", {}, True),
        ("extra_field", {**base, "zz_extra": 1}, True),
        ("extra_nested", {**full, "zz": {"a": [1, {"b": None}]}}, True),
    ]
    for name in schema.get("required", []):
        cases.append((f"missing:{name}", {k: v for k, v in full.items() if k != name}, True))
    wrong = [
        (f"{name}={label}", {**full, name: value}, True)
        for name, prop in schema.get("properties", {}).items()
        for label, value in gen.wrong_values(prop, schema)
    ]
    rng.shuffle(wrong)
    cases += wrong[: max(0, budget - len(cases) - valid - 6)]
    # Inputs JSON cannot carry over HTTP (the SDK refuses them at the protocol level): in process only.
    prop = next(iter(schema.get("properties", {})), "x")
    cases += [
        ("lone_surrogate", {**full, prop: "a\udcffb"}, False),
        ("surrogate_key", {**full, "\ud800": 1}, False),
        ("nan", {**full, prop: float("nan")}, False),
        ("inf", {**full, prop: float("-inf")}, False),
        ("not_object_list", [full], False),
        ("not_object_str", "garbage", False),
    ]
    cases += [(f"valid{i}", gen.object(schema, schema), True) for i in range(valid)]
    return cases


def short(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 300 else text[:300] + f"... ({len(text)} chars)"


# -- tools, in process ---------------------------------------------------------------------------------


def _fuzz_episode(
    world, episode, salt: str, *, budget: int, valid: int, refused: Callable[[Any], bool] = lambda r: r.is_error
) -> tuple[list[str], dict[str, int], bool]:
    """Every tool's fuzz cases on one episode (seeded by SEED and `salt`, with the ids the episode
    holds): findings (a raise, a bug flag, a `refused` call, by default any error, that changed the
    state), counts, and whether the episode ended up flagged."""
    rng, ids = random.Random(f"{SEED}-{salt}"), known_ids(episode)
    findings: list[str] = []
    counts = {"cases": 0, "rejected": 0, "accepted": 0}
    try:
        for tool in sorted(world.tools):
            for label, arguments, _ in fuzz_cases(world, tool, rng, ids, budget=budget, valid=valid):
                before = episode.state_hash()
                kept = copy.deepcopy(arguments)
                try:
                    result = episode.call(tool, arguments)
                except Exception as exc:
                    findings.append(f"{tool} {label}: raised {type(exc).__name__}: {exc} on {short(kept)}")
                    continue
                counts["cases"] += 1
                counts["rejected" if result.is_error else "accepted"] += 1
                if result.bug:
                    findings.append(f"{tool} {label}: simulator bug flag on {short(kept)}: {episode.flags[-1:]}")
                if refused(result) and episode.state_hash() != before:
                    findings.append(f"{tool} {label}: a refused call changed the state: {short(kept)}")
        # Everything the fuzzing stored reads back: the transcript and trajectory encode.
        json.dumps(episode_trajectory(episode).model_dump(mode="json"), ensure_ascii=False).encode("utf-8")
    finally:
        flagged = episode.flagged
        episode.close()
    return findings, counts, flagged


@pytest.mark.parametrize("world_name", WORLDS)
def test_every_tool_survives_schema_driven_fuzzing_in_process(world_name, templates):
    world = load_world(world_name)
    episode = Episode.create(world, 0, "small", templates=templates)
    findings, counts, flagged = _fuzz_episode(world, episode, world_name, budget=44, valid=6)
    print(f"{world_name}: {len(world.tools)} tools, {counts}")
    assert not findings, "\n".join(findings)
    assert not flagged
    assert counts["rejected"] > counts["cases"] // 2 and counts["accepted"] > 0  # the generator exercises both


@pytest.mark.parametrize("world_name", WORLDS)
def test_every_tool_survives_fuzzing_under_the_hostile_fault_profile(world_name, templates):
    """With faults (and the world's edge-case data) on: no call raises or flags the episode, and
    every call refused before it ran (invalid arguments, a transient or rate-limit fault) leaves
    the state unchanged. (Partial and timeout faults apply writes by design: not checked.)"""
    world = load_world(world_name)
    episode = Episode.create_with_faults(world, 0, "small", BUILTIN["hostile"], templates=templates)

    def refused(result: Any) -> bool:
        return result.is_error and (
            result.call_seq is None or (result.fault or {}).get("kind") in ("transient", "rate_limit")
        )

    findings, counts, flagged = _fuzz_episode(
        world, episode, f"hostile-{world_name}", budget=14, valid=4, refused=refused
    )
    print(f"{world_name} (hostile): {counts['cases']} cases")
    assert not findings, "\n".join(findings)
    assert not flagged


def test_fuzz_cases_cover_each_kind_of_malformed_input():
    world = load_world("retail")
    schema = world.tools["add_customer_address"].input_schema()
    labels = [
        label for label, _, _ in fuzz_cases(world, "add_customer_address", random.Random(0), {}, budget=200, valid=3)
    ]
    assert {f"missing:{n}" for n in schema["required"]} <= set(labels)
    for fragment in (
        "extra_field",
        "=null",
        "=int",
        "=huge",
        "=unicode",
        "=too_long",
        "=nested60",
        "lone_surrogate",
        "nan",
        "valid0",
    ):
        assert any(fragment in label for label in labels), fragment
    # The "valid" inputs really are valid, for every tool of every world (so the wrong values,
    # swapped into a valid input one field at a time, are what a refusal is about).
    for name in WORLDS:
        w = load_world(name)
        for tool in w.tools:
            for label, arguments, _ in fuzz_cases(w, tool, random.Random(1), {}, budget=0, valid=3):
                if label.startswith("valid"):
                    w.tools[tool].args_model.model_validate(arguments)


# -- tools, over real MCP on loopback ------------------------------------------------------------------


async def test_every_tool_over_mcp_answers_without_5xx_flags_or_state_changes_on_refusal(serve_http):
    worlds = [load_world(n) for n in WORLDS]
    live = serve_http(worlds)
    findings: list[str] = []
    counts: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        for world in worlds:
            r = await http.post("/episodes", json={"world": world.name, "seed": 0, "scale": "small"})
            assert r.status_code == 201, r.text
            ep = r.json()
            table = world.metadata.sorted_tables[0].name

            async def state_hash(ep: dict[str, Any] = ep, table: str = table) -> str:
                got = await http.get(f"/episodes/{ep['id']}/state", params={"tables": table, "limit": 0})
                assert got.status_code == 200, got.text
                return got.json()["state_hash"]

            episode = live.manager.get(ep["id"])
            ids = await anyio.to_thread.run_sync(known_ids, episode)
            rng = random.Random(f"{SEED}-mcp-{world.name}")
            counts[world.name] = 0
            with anyio.fail_after(240):
                async with Client(ep["mcp_url"]) as client:
                    for tool in sorted(world.tools):
                        cases = [c for c in fuzz_cases(world, tool, rng, ids, budget=30, valid=2) if c[2]]
                        sample = [c for c in cases if c[0] in ("empty", "valid0")]
                        sample += [c for c in cases if "=huge" in c[0]][:1]
                        sample += rng.sample([c for c in cases if c not in sample], 3)
                        for label, arguments, _ in sample:
                            before = await state_hash()
                            try:
                                result = await client.call_tool(tool, arguments)
                                refused = result.is_error
                            except MCPError as exc:  # a JSON-RPC error answer: refused at the protocol level
                                refused, result = True, exc
                            except Exception as exc:
                                findings.append(f"{world.name}.{tool} {label}: {type(exc).__name__}: {exc}")
                                continue
                            counts[world.name] += 1
                            if refused and await state_hash() != before:
                                findings.append(f"{world.name}.{tool} {label}: a refused call changed the state")
                            if "Internal error in the simulator" in str(result):
                                findings.append(f"{world.name}.{tool} {label}: bug flag on {short(arguments)}")
            described = (await http.get(f"/episodes/{ep['id']}")).json()
            if described["flagged"]:
                findings.append(f"{world.name}: episode flagged: {described['flags']}")
        assert (await http.get("/health")).status_code == 200
    print(f"MCP fuzz calls per world: {counts}")
    assert not findings, "\n".join(findings)
    assert all(n >= 4 * len(w.tools) for n, w in zip(counts.values(), worlds, strict=True))


async def test_malformed_mcp_messages_never_get_a_5xx(serve_http):
    world = load_world(WORLDS[0])
    live = serve_http([world])
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    deep = "[" * 1000 + "]" * 1000
    bodies: list[bytes] = [
        b"",
        b"{",
        b"null",
        b"[]",
        b"123",
        b'"x"',
        deep.encode(),
        b"\xff\xfe\x00garbage",
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "x", "arguments": NaN}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\\udcff", "arguments": {}}}',
        b'{"jsonrpc": "2.0", "id": 1e400, "method": "tools/call"}',
        json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {"a": HUGE * 3}}}
        ).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "nope"}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": {"a": 1}, "method": 5}).encode(),
    ]
    statuses = []
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        r = await http.post("/episodes", json={"world": world.name, "seed": 0, "scale": "small"})
        assert r.status_code == 201, r.text
        ep = r.json()
        before = (await http.get(f"/episodes/{ep['id']}/state", params={"limit": 0})).json()["state_hash"]
        for path in (f"/episodes/{ep['id']}/mcp", "/episodes/nope/mcp"):
            for body in bodies:
                got = await http.post(path, content=body, headers=headers)
                statuses.append(got.status_code)
                assert got.status_code < 500, (path, body[:80], got.status_code, got.text[:300])
            for method in ("GET", "PUT", "DELETE", "PATCH"):
                got = await http.request(method, path, headers=headers)
                assert got.status_code < 500, (path, method, got.status_code, got.text[:300])
        after = (await http.get(f"/episodes/{ep['id']}/state", params={"limit": 0})).json()["state_hash"]
        assert after == before
        assert not (await http.get(f"/episodes/{ep['id']}")).json()["flagged"]
    print(f"malformed MCP messages: {len(statuses)} answered, statuses {sorted(set(statuses))}")


# -- control routes ----------------------------------------------------------------------------------


def bad_bodies() -> Iterator[tuple[str, bytes, str]]:
    """(label, body, content type)."""
    j = "application/json"
    nested = "[" * 1000 + "]" * 1000
    yield "malformed", b'{"world": ', j
    yield "truncated", b'{"a": [1, 2', j
    yield "not_utf8", b'{"world": "\xff\xfe"}', j
    yield "lone_surrogate", b'{"world": "\\udcff"}', j
    yield "surrogate_key", b'{"\\ud800": 1}', j
    yield "nan", b'{"seed": NaN}', j
    yield "infinity", b'{"seed": -Infinity}', j
    yield "1e400", b'{"seed": 1e400}', j
    yield "huge_int", b'{"seed": ' + b"9" * 5000 + b"}", j
    yield "deep_list", nested.encode(), j
    yield "deep_object", ('{"a":' * 1000 + "1" + "}" * 1000).encode(), j
    yield "too_big", b'{"answer": "' + b"A" * (MAX_BODY_BYTES + 10) + b'"}', j
    yield "list", b"[1, 2, 3]", j
    yield "string", b'"hello"', j
    yield "number", b"42", j
    yield "null", b"null", j
    yield (
        "wrong_types",
        json.dumps(
            {"world": 5, "seed": "zero", "scale": [], "task": {}, "faults": 3, "answer": 7, "messages": "x"}
        ).encode(),
        j,
    )
    yield "negative_seed", json.dumps({"seed": -1, "world": "nope"}).encode(), j
    yield "extra", json.dumps({"zz": 1, "answer": None}).encode(), j
    yield "faults_path", json.dumps({"faults": "/etc/passwd"}).encode(), j
    yield (
        "faults_inline_bad",
        json.dumps({"faults": {"transient_rate": 1e300, "real_delay": True, "latency_ms": [1, 2]}}).encode(),
        j,
    )
    yield "messages_garbage", json.dumps({"messages": [1, None, {"role": {"x": 1}}]}).encode(), j
    yield "form", b"a=1&b=2", "application/x-www-form-urlencoded"
    yield "sqlite_garbage", b"SQLite format 3\x00" + b"\x00" * 200, "application/vnd.sqlite3"
    yield "sqlite_empty", b"", "application/vnd.sqlite3"


async def test_every_control_route_answers_malformed_requests_with_a_json_4xx(serve_http):
    worlds = [load_world(n) for n in WORLDS]
    live = serve_http(worlds)
    app_routes = [r for r in live.manager.worlds.__self__.routes()]  # the ControlPlane's own routes
    counts: dict[str, int] = {}
    findings: list[str] = []

    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:

        async def fresh() -> str:
            r = await http.post("/episodes", json={"world": worlds[0].name, "seed": 0, "scale": "small"})
            assert r.status_code == 201, r.text
            return r.json()["id"]

        witness = await fresh()  # never targeted: unchanged by every rejected request
        witness_before = (await http.get(f"/episodes/{witness}/state", params={"limit": 0})).json()["state_hash"]

        def check(route: str, label: str, got: httpx.Response) -> None:
            counts[route] = counts.get(route, 0) + 1
            if got.status_code >= 500:
                findings.append(f"{route} {label}: {got.status_code} {got.text[:300]}")
            elif got.status_code >= 400:
                try:
                    error = got.json()["error"]
                    assert isinstance(error, str) and error
                except Exception:
                    findings.append(f"{route} {label}: {got.status_code} without a JSON error: {got.text[:200]}")

        for route in app_routes:
            path_template, methods = route.path, sorted(route.methods - {"HEAD"})
            key = f"{'/'.join(methods)} {path_template}"
            for method in methods:
                for target in ("unknown", "live"):
                    if "{episode_id}" not in path_template and target == "unknown":
                        continue
                    for label, body, ctype in bad_bodies():
                        episode_id = "nope-" + "x" * 30 if target == "unknown" else await fresh()
                        before = None
                        if target == "live":
                            before = (await http.get(f"/episodes/{episode_id}/state", params={"limit": 0})).json()[
                                "state_hash"
                            ]
                        path = path_template.replace("{episode_id}", episode_id)
                        got = await http.request(method, path, content=body, headers={"Content-Type": ctype})
                        check(key, f"{method} {target} {label}", got)
                        if target == "live" and got.status_code >= 400:  # refused: the episode is untouched
                            after = await http.get(f"/episodes/{episode_id}")
                            state = await http.get(f"/episodes/{episode_id}/state", params={"limit": 0})
                            if (
                                after.status_code != 200
                                or state.json()["state_hash"] != before
                                or after.json()["ended"]
                                or after.json()["flagged"]
                            ):
                                findings.append(f"{key} {method} {label}: a refused request changed the episode")
                        if target == "live" and method == "DELETE" and got.status_code != 204:
                            findings.append(f"{key} {label}: delete of a live episode answered {got.status_code}")
                        if target == "live" and got.status_code < 400 and method != "DELETE":
                            await http.delete(f"/episodes/{episode_id}")  # keep the server under its cap
                        elif target == "live" and got.status_code >= 400:
                            await http.delete(f"/episodes/{episode_id}")
                # Query strings that are wrong.
                if path_template.endswith("/state"):
                    episode_id = await fresh()
                    for query in (
                        {"limit": "-1"},
                        {"limit": "abc"},
                        {"limit": "1e400"},
                        {"limit": "9" * 400},
                        {"tables": "nope,\x00"},
                        {"tables": "," * 1000},
                        {"tables": "\udcff".encode("utf-8", "surrogatepass").decode("latin-1")},
                    ):
                        got = await http.get(path_template.replace("{episode_id}", episode_id), params=query)
                        check(key, f"query {query!r:.60}", got)
                    await http.delete(f"/episodes/{episode_id}")
            # Wrong methods, on unknown and live ids.
            episode_id = await fresh()
            for method in sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - set(methods)):
                for target_id in ("nope", episode_id):
                    path = path_template.replace("{episode_id}", target_id)
                    got = await http.request(
                        method, path, content=b'{"a": 1}', headers={"Content-Type": "application/json"}
                    )
                    check(key, f"wrong method {method}", got)
                    if got.status_code < 400 and not any(
                        other.path == path_template and method in other.methods for other in app_routes
                    ):
                        findings.append(f"{key}: {method} is not a method of the route but answered {got.status_code}")
            await http.delete(f"/episodes/{episode_id}")

        witness_after = await http.get(f"/episodes/{witness}/state", params={"limit": 0})
        assert witness_after.status_code == 200 and witness_after.json()["state_hash"] == witness_before
        assert (await http.get("/health")).status_code == 200
    print(f"control-route cases: {counts} (total {sum(counts.values())})")
    assert not findings, "\n".join(findings)


# -- regressions found by the fuzzing above ------------------------------------------------------


async def test_a_state_limit_past_sqlites_64_bit_range_is_a_422_not_a_500(serve_http):
    live = serve_http([load_world(WORLDS[0])])
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        ep = (await http.post("/episodes", json={"world": WORLDS[0], "seed": 0, "scale": "small"})).json()
        for limit in (str(2**63), "9" * 400):
            got = await http.get(f"/episodes/{ep['id']}/state", params={"limit": limit})
            assert got.status_code == 422, got.text
            assert "limit" in got.json()["error"]
        got = await http.get(f"/episodes/{ep['id']}/state", params={"limit": str(2**63 - 1)})
        assert got.status_code == 200


async def test_a_wrong_method_or_unknown_path_is_a_json_error_with_the_reason(serve_http):
    live = serve_http([load_world(WORLDS[0])])
    async with httpx.AsyncClient(base_url=live.url, timeout=60) as http:
        got = await http.put("/episodes")
        assert got.status_code == 405 and got.headers["allow"]
        assert got.json()["error"] == "Method Not Allowed: PUT /episodes"
        got = await http.get("/no/such/route")
        assert got.status_code == 404 and got.json()["error"] == "Not Found: GET /no/such/route"


async def test_verify_grades_garbage_conversations_and_answers_without_a_5xx(serve_http):
    """The body of POST .../verify reaches the grader (conversation checks read the messages):
    JSON-valid but ill-shaped messages and edge-case answers are graded or refused with a 4xx."""
    from mcpsim.tasks import load_tasks

    worlds = [load_world(n) for n in WORLDS]
    live = serve_http(worlds, tasks={n: load_tasks(n) for n in WORLDS}, max_episodes=200)
    garbage_messages: list[Any] = [
        [{}],
        [{"role": 5}],
        [{"role": "user", "content": None}],
        [{"role": "tool", "content": {"a": [1]}}],
        [{"role": "assistant", "tool_calls": "x"}],
        [{"role": "assistant", "tool_calls": [{}]}],
        [{"role": "assistant", "tool_calls": [{"id": 1, "function": {"name": 1, "arguments": "{not json"}}]}],
        [{"role": "assistant", "content": [{"type": "text", "text": 5}, "loose", None]}],
        [
            {"role": "assistant", "tool_calls": [{"function": {"name": "x", "arguments": {"nested": [[[]]]}}}]},
            {"role": "tool", "tool_call_id": None, "content": HUGE[:20_000]},
        ],
    ]
    answers: list[Any] = ["", "\x00", "\u202e\U0010ffff", HUGE[:30_000], None]
    statuses: list[int] = []
    async with httpx.AsyncClient(base_url=live.url, timeout=120) as http:
        for i, world in enumerate(worlds):  # each world half of the cases: every case in two worlds
            task = min(t.id for t in load_tasks(world.name).tasks)
            rng = random.Random(f"{SEED}-verify-{world.name}")
            for messages in garbage_messages[i % 2 :: 2]:
                created = await http.post("/episodes", json={"world": world.name, "task": task})
                assert created.status_code == 201, created.text
                ep = created.json()
                got = await http.post(
                    f"/episodes/{ep['id']}/verify", json={"answer": rng.choice(answers), "messages": messages}
                )
                statuses.append(got.status_code)
                assert got.status_code < 500, (world.name, messages, got.text[:500])
                assert not (await http.get(f"/episodes/{ep['id']}")).json()["flagged"]
                await http.delete(f"/episodes/{ep['id']}")
    print(f"verify fuzz: {len(statuses)} gradings, statuses {sorted(set(statuses))}")
