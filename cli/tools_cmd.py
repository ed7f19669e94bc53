"""``reach tools``: see and change tool state in the shared store every worker reads.

``list`` shows each tool's versions and status; ``enable``, ``disable``, ``deprecate``
(optionally with a sunset ``--date``) and ``retire`` change it, for the whole tool or one
``--version``; ``coverage`` reports tools the model never chose. Each change is audited.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Annotated

import typer

from config.settings import get_settings
from nodes.services import Services
from observability.audit import AuditLog
from scenarios import SCENARIOS
from tools.registry.cards import ToolRegistry
from tools.registry.lifecycle import (
    TransitionRefusedError,
    coverage_lines,
    lifecycle_from_settings,
    read_audit_records,
    tool_coverage,
)

tools_app = typer.Typer(help="List, enable, disable, deprecate and retire tools at run time.")


def _catalog() -> ToolRegistry:
    return Services(scenarios=SCENARIOS).tools


registry_factory: Callable[[], ToolRegistry] = _catalog
"""Builds the registry whose cards the commands act on (the lead may point it elsewhere)."""

VersionOpt = Annotated[
    str | None, typer.Option("--version", "-v", help="Only this version of the tool.")
]
ActorOpt = Annotated[str, typer.Option("--actor", help="Who makes the change, for the audit.")]
ReasonOpt = Annotated[str, typer.Option("--reason", help="Why, for the audit.")]


def _open() -> tuple[ToolRegistry, AuditLog]:
    settings = get_settings()
    audit = AuditLog(settings.data_dir / "audit.jsonl")
    registry = registry_factory()
    registry.lifecycle = lifecycle_from_settings(settings, audit)
    return registry, audit


def _apply(change: Callable[[ToolRegistry], None], done: str) -> None:
    registry, audit = _open()
    try:
        change(registry)
    except KeyError as exc:
        typer.echo(f"error: {exc.args[0]}", err=True)
        raise typer.Exit(2) from exc
    except TransitionRefusedError as exc:
        typer.echo(f"refused: {exc}", err=True)
        raise typer.Exit(1) from exc
    finally:
        audit.flush()
    typer.echo(done)


@tools_app.command("list")
def list_tools() -> None:
    """Show every registered tool, its versions and their status."""
    registry, _ = _open()
    for name in registry.registered():
        serving = registry.get(name)
        versions = []
        for version in registry.versions(name):
            state = registry.status(name, version)
            sunset = f" until {state['sunset']}" if state["sunset"] else ""
            versions.append(f"v{version}:{state['status']}{sunset}")
        offered = "offered" if serving is not None and not serving.deprecated else "not offered"
        current = f"serves v{serving.version}" if serving is not None else "serves none"
        typer.echo(f"{name}  {' '.join(versions)}  {current}, {offered}")


@tools_app.command()
def enable(name: str, version: VersionOpt = None, actor: ActorOpt = "cli") -> None:
    """Offer and run a tool (or one version) again."""
    _apply(
        lambda r: r.enable(name, version=version, actor=actor),
        f"{name}{_v(version)} enabled",
    )


@tools_app.command()
def disable(
    name: str, version: VersionOpt = None, actor: ActorOpt = "cli", reason: ReasonOpt = ""
) -> None:
    """Stop offering and running a tool (or one version); calls get a clear refusal."""
    _apply(
        lambda r: r.disable(name, version=version, actor=actor, reason=reason),
        f"{name}{_v(version)} disabled",
    )


@tools_app.command()
def deprecate(
    name: str,
    version: VersionOpt = None,
    sunset: Annotated[
        str | None,
        typer.Option("--date", help="YYYY-MM-DD from which calls are refused."),
    ] = None,
    actor: ActorOpt = "cli",
    reason: ReasonOpt = "",
) -> None:
    """Stop offering a tool to the model; it still runs until the ``--date``, if given."""
    try:
        when = date.fromisoformat(sunset) if sunset else None
    except ValueError as exc:
        typer.echo(f"error: --date must be YYYY-MM-DD, not {sunset!r}", err=True)
        raise typer.Exit(2) from exc
    _apply(
        lambda r: r.deprecate(name, version=version, sunset=when, actor=actor, reason=reason),
        f"{name}{_v(version)} deprecated" + (f", refused from {when}" if when else ""),
    )


@tools_app.command()
def retire(
    name: str,
    version: Annotated[str, typer.Option("--version", "-v", help="The version to retire.")],
    force: Annotated[bool, typer.Option(help="Retire even with tasks pinned to it.")] = False,
    actor: ActorOpt = "cli",
) -> None:
    """Retire one version once traffic has moved to a newer one."""
    _apply(
        lambda r: r.retire(name, version, actor=actor, force=force),
        f"{name}{_v(version)} retired",
    )


@tools_app.command()
def coverage() -> None:
    """Report tools the model never chose (from the audit trail)."""
    registry, _ = _open()
    records = read_audit_records(get_settings().data_dir / "audit.jsonl")
    for line in coverage_lines(tool_coverage(registry.names(), records)):
        typer.echo(line)


def _v(version: str | None) -> str:
    return f"@{version}" if version else ""
