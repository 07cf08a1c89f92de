"""Tasks and grading: `mcpsim tasks`, `mcpsim check`, `mcpsim verify`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from mcpsim import logs
from mcpsim.cli._app import _apply, log_options, main, spec_options
from mcpsim.cli._lookup import find_tasks, find_world, lookup_message
from mcpsim.cli._output import print_json, print_table
from mcpsim.world import world_names

if TYPE_CHECKING:
    from mcpsim.audit import WorldReport


@main.command()
@click.argument("world")
@click.option("--split", type=click.Choice(["train", "dev", "test", "hard"]), help="Only tasks of this split.")
@click.option("--tag", "tags", multiple=True, help="Only tasks with this tag (repeatable: any of them).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Machine-readable output: whole tasks (instructions, gold actions, rubrics) with their measured "
    "features and tier, one object per row.",
)
@_apply(spec_options)
def tasks(world: str, split: str | None, tags: tuple[str, ...], as_json: bool) -> None:
    """List a world's tasks: id, difficulty, split, gold calls, rubric checks and tags; with --json,
    whole tasks (instructions, gold actions and rubrics).

    This is a harness's and an author's view: it shows the answers, so it is never the agent's
    channel (agents only see MCP).
    """
    logs.configure("WARNING")  # generated tasks build templates: their log lines go to stderr, never into --json
    every = find_tasks(world).tasks
    selected = [t for t in every if (split is None or t.split == split) and (not tags or set(tags) & set(t.tags))]
    if every and not selected:  # a filter that keeps nothing is a mistake, not an empty answer
        _no_task_matches(world, every, split, tags)
    if as_json:
        from mcpsim.cli._measured import features_by_task

        features = features_by_task(world, selected)
        print_json([t.model_dump(mode="json") | {"features": features[t.id].model_dump()} for t in selected])
        return
    rows = [[t.id, t.difficulty, t.split, str(len(t.gold)), str(len(t.rubric)), ", ".join(t.tags)] for t in selected]
    print_table(["task", "difficulty", "split", "gold", "checks", "tags"], rows, numbers=("gold", "checks"))
    click.echo(f"{len(selected)} tasks", err=True)


def _no_task_matches(world: str, every: list[Any], split: str | None, tags: tuple[str, ...]) -> None:
    """A usage error naming the filter that kept none of `world`'s tasks, and what it has."""
    asked = [f"--split {split}"] if split else []
    asked += [f"--tag {tag}" for tag in tags]
    known = sorted({tag for t in every for tag in t.tags})
    splits = sorted({t.split for t in every})
    raise click.UsageError(
        f"no task of {world} matches {' '.join(asked)} (its splits: {', '.join(splits)}; "
        f"its tags: {', '.join(known) or 'none'})"
    )


@main.command()
@click.argument("worlds", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable report.")
@_apply(log_options)
@_apply(spec_options)
def check(worlds: tuple[str, ...], as_json: bool, log_level: str, log_format: str) -> None:
    """Validate every task of WORLDS (default: the worlds --world-spec and --worlds-dir load, else
    all installed worlds).

    \b
    For each task: the file is valid; the gold actions replay and score 1.0 strict; two
    replays end in the same state hash; a do-nothing agent scores 0 strict and every check's
    noop_passes label matches what it gets; no canary string reaches anything an agent sees;
    every cheating baseline fails strict (do nothing and answer with the policy text or the
    pasted gold reads; the gold steps with a negated or a stuffed answer; the gold steps plus
    one unrequested write; injected text in the writes' free text; an unrequested irreversible
    write, then reverted; a bare "Shall I go ahead?" before the writes; the random agent);
    the transcriber and the one-step greedy agent are printed as their pass rate over the
    world's tasks (at most 5% is ok, above is HIGH: a report, not a failure);
    every listed alternative passes and every near
    miss fails. Prints a table per world. Exits 0 if every check holds, 1 if anything fails,
    2 on a usage error (an unknown world or option).
    """
    from rich.console import Console
    from rich.progress import Progress

    from mcpsim.audit import check_world
    from mcpsim.catalogue import loaded_worlds

    logs.configure("WARNING" if log_level.upper() == "INFO" else log_level, log_format)
    names = list(worlds) or loaded_worlds() or world_names()
    for name in names:
        find_world(name)
    reports = []
    with Progress(console=Console(stderr=True), transient=True, disable=as_json) as progress:
        bar = progress.add_task("checking", total=len(names))
        for name in names:
            progress.update(bar, description=f"checking {name}")
            reports.append(check_world(name))
            progress.advance(bar)
    if as_json:
        print_json([r.model_dump(mode="json") for r in reports])
    else:
        for r in reports:
            _print_check_report(r)
    if not all(r.ok for r in reports):
        sys.exit(1)


def _print_check_report(report: WorldReport) -> None:
    """A world's check: one line per kind of run, how many tasks (or solutions) it ran on and
    how many passed, against what must pass; then every problem."""
    from mcpsim.audit import BASELINE_LABELS

    bad = [t for t in report.tasks if not t.ok]
    mark = "ok" if report.ok else "FAILED"
    click.echo(
        f"{report.world} (version {report.world_version}): "
        f"{report.task_count - len(bad)}/{report.task_count} tasks ok  {mark}"
    )
    if report.tasks:
        rows: list[list[str]] = []

        def row(name: str, ran: int, passed: int, must: str, skipped: int | str = "") -> None:
            good = passed == ran if must == "all" else passed == 0
            rows.append([name, str(ran), str(passed), must, str(skipped), "ok" if good else "FAILED"])

        graded = [t for t in report.tasks if t.gold_reward is not None]
        row("gold", len(graded), sum(t.gold_reward == 1.0 for t in graded), "all")
        row("do nothing", len(graded), sum(t.noop_reward == 1.0 for t in graded), "none")
        for name, tally in report.baselines.items():
            if name in report.pass_rates:  # judged by its rate over the world's tasks (at most 5%)
                rate = report.pass_rates[name]
                rows.append([f"{name}: {BASELINE_LABELS[name]}", str(tally.applied), f"{tally.passed} ({rate:.0%})"])
                rows[-1] += ["<=5%", str(tally.not_applicable), "ok" if rate <= 0.05 else "HIGH"]
                continue
            row(f"{name}: {BASELINE_LABELS[name]}", tally.applied, tally.passed, "none", tally.not_applicable)
        alternatives, near_misses = report.alternatives, report.near_misses
        row("alternatives", alternatives.run, alternatives.behaved, "all")
        row("near misses", near_misses.run, near_misses.run - near_misses.behaved, "none")
        columns = ["run", "ran on", "passed", "must pass", "n/a", "verdict"]
        print_table(columns, rows, keep=("must pass", "verdict"), numbers=("ran on", "passed", "n/a"))
    for problem in report.problems:
        click.echo(f"  {problem}")
    for t in bad:
        for problem in t.problems:
            click.echo(f"  {t.task_id}: {problem}")


@main.command()
@click.argument("world")
@click.option("--task", "task_id", required=True, help="The task the episode was created for.")
@click.option(
    "--snapshot",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="The episode's database (GET /episodes/{id}/snapshot).",
)
@click.option("--answer", help="The agent's final answer to the user.")
@click.option("--answer-file", type=click.File("r"), help="Read the final answer from a file ('-': stdin).")
@click.option(
    "--conversation",
    "conversation_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The conversation as a JSON list of OpenAI-style messages, for checks on the dialogue.",
)
@click.option("--json", "as_json", is_flag=True, help="The verdict as JSON.")
@click.option(
    "--record",
    "record_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Also write the episode's trajectory (every call with its row changes) as JSON here.",
)
@_apply(spec_options)
def verify(
    world: str,
    task_id: str,
    snapshot: Path,
    answer: str | None,
    answer_file: Any,
    conversation_path: Path | None,
    as_json: bool,
    record_path: Path | None,
) -> None:
    """Grade a recorded episode against its task. Exits 0 if it passes, 1 if not, 2 on a usage
    error (an unknown world or task, a missing file), 3 if grading could not finish (an
    infrastructure error, not a verdict: retry it)."""
    from mcpsim.engine import Episode
    from mcpsim.grading import GradingUnavailable, Verifier

    logs.configure("WARNING")
    if answer is not None and answer_file is not None:
        raise click.UsageError("give --answer or --answer-file, not both")
    w = find_world(world)
    task_set = find_tasks(world)
    try:
        task = task_set.get(task_id)
    except LookupError as exc:
        raise click.BadParameter(lookup_message(exc), param_hint="--task") from None
    try:
        episode = Episode.restore(w, snapshot.read_bytes())
    except Exception as exc:
        raise click.ClickException(f"{snapshot} is not an mcpsim episode of {world}: {exc}") from None
    conversation = _conversation(conversation_path) if conversation_path is not None else None
    try:
        verdict = Verifier(w, task_set).grade(
            episode, task, answer_file.read() if answer_file else answer, conversation=conversation
        )
    except GradingUnavailable as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(3)
    if record_path is not None:
        from mcpsim.trajectories import episode_trajectory

        record_path.write_text(episode_trajectory(episode, verdict=episode.verdict).model_dump_json())
    click.echo(verdict.model_dump_json(indent=2) if as_json else verdict.report())
    sys.exit(0 if verdict.passed else 1)


def _conversation(path: Path) -> list[dict[str, Any]]:
    try:
        messages = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise click.BadParameter(f"{path} is not JSON: {exc}", param_hint="--conversation") from None
    if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
        raise click.BadParameter(f"{path} must hold a JSON list of message objects", param_hint="--conversation")
    return messages
