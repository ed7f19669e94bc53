"""Every setting the project reads from the environment, read once.

``get_settings()`` parses the environment (and a ``.env`` file) the first time it is called
and caches the result; everything else receives a ``Settings`` object instead of reading
``os.environ``. Tests build their own ``Settings(...)`` or call ``get_settings.cache_clear()``
after ``monkeypatch.setenv``.
"""

from __future__ import annotations

from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    """The project's configuration; environment names are given per field."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", populate_by_name=True
    )

    # ---- storage -------------------------------------------------------------------------
    data_dir: Path = Field(Path(".reach"), alias="REACH_DATA_DIR")
    """Business database, checkpoints, audit log and generated secrets."""
    checkpointer: Literal["sqlite", "redis", "memory"] | None = Field(
        None, alias="REACH_CHECKPOINTER"
    )
    """Which saver ``reach`` uses; ``None`` picks Redis when ``redis_url`` is set, else SQLite."""
    redis_url: str | None = Field(None, alias="REDIS_URL")
    """Redis for checkpoints and the shared stores."""
    redis_cluster: bool = Field(False, alias="REACH_REDIS_CLUSTER")
    """The URL names a Redis Cluster node."""
    redis_saver: Literal["plain", "langgraph"] = Field("plain", alias="REACH_REDIS_SAVER")
    """``langgraph``: use langgraph-checkpoint-redis when the server has the modules."""
    checkpoint_ttl_s: float | None = Field(None, alias="REACH_CHECKPOINT_TTL_S")
    """Expire threads idle this long."""
    idempotency_retention_s: float = Field(24 * 3600, alias="REACH_IDEMPOTENCY_RETENTION_S")
    """How long request records are kept."""

    # ---- scenarios -----------------------------------------------------------------------
    weather_url: str = Field("http://127.0.0.1:8765", alias="REACH_WEATHER_URL")
    """The weather API."""
    today: date | None = Field(None, alias="REACH_TODAY")
    """A fixed "today" (demos, tests); ``None`` is the real date."""

    # ---- model (issue 9) -----------------------------------------------------------------

    # ---- auth (issue 10) -----------------------------------------------------------------

    # ---- observability (issue 11) --------------------------------------------------------

    # ---- hardening (issue 12) ------------------------------------------------------------
    vault_secret: SecretStr | None = Field(None, alias="REACH_VAULT_SECRET")
    """Key of the identity vault's tokens; ``None`` creates ``data_dir/vault.key`` (0600)."""

    # ---- scale (issue 13) ----------------------------------------------------------------

    # ---- jobs and tool lifecycle (issue 14) ----------------------------------------------


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process's settings, parsed from the environment on first use."""
    return Settings()


__all__ = ["SecretStr", "Settings", "get_settings"]
