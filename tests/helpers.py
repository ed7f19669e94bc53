"""Building blocks tests share: the shipped scenarios' registries, database and executor."""

from __future__ import annotations

from pathlib import Path

from config.settings import get_settings
from nodes.services import Services, default_executor
from scenarios import SCENARIOS
from storage.db import Database
from tools.registry.cards import ToolRegistry
from tools.registry.lifecycle import ToolLifecycle

__all__ = ["default_executor", "default_registry", "finance_registry", "open_database", "set_env"]


def _services() -> Services:
    return Services(scenarios=SCENARIOS)


def default_registry() -> ToolRegistry:
    """A fresh registry of the main agent's tools, under the shipped scenarios' grants.

    Its lifecycle state (enabled, disabled, pins) is its own, in memory: ``Services`` shares
    it in the data directory, where one test's ``disable`` would outlive the test.
    """
    registry = _services().tools
    registry.lifecycle = ToolLifecycle()
    return registry


def finance_registry() -> ToolRegistry:
    """A fresh registry of the finance agent's own tools (lifecycle in memory, as above)."""
    services = _services()
    registry = services.registry_of(services.catalog.agent_cards["finance"])
    registry.lifecycle = ToolLifecycle()
    return registry


def open_database(path: Path | str) -> Database:
    """Open (creating and seeding) a business database with every shipped scenario's data."""
    return Database(path, seeds=[s.seed for s in SCENARIOS if s.seed is not None])


def set_env(monkeypatch: object, name: str, value: str) -> None:
    """Set an environment variable for one test and re-read the settings from it."""
    monkeypatch.setenv(name, value)  # type: ignore[attr-defined]
    get_settings.cache_clear()
