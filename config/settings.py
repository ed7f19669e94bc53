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

    # ---- understanding (issue 37) ----------------------------------------------------------
    embeddings: str = Field("e5", alias="REACH_EMBEDDINGS")
    """Sentence embeddings of the example recognizer: ``e5`` (bundled multilingual-e5-small,
    offline) or ``openai:<model>`` at ``embeddings_url``."""
    embeddings_url: str | None = Field(None, alias="REACH_EMBEDDINGS_URL")
    embedding_threads: int = Field(1, ge=1, alias="REACH_EMBEDDING_THREADS")
    """CPU threads of the bundled embedding model (one message: 16 ms on one core of this
    machine, 9 ms on two, when nothing else runs); the first value a process reads is kept."""
    embeddings_keep_messages: bool = Field(False, alias="REACH_EMBEDDINGS_KEEP_MESSAGES")
    """Keep messages' vectors in ``cache_dir`` too (a test suite's or a benchmark's, whose
    messages repeat from run to run); off by default: a user's message never goes to disk,
    not even as a vector."""
    """An OpenAI-compatible embeddings endpoint (``.../v1``) for ``openai:<model>``."""
    cache_dir: Path = Field(
        Path.home() / ".cache" / "agent-reach", alias="REACH_CACHE_DIR"
    )
    """Examples' vectors and trained recognizers, keyed by their data: shared by every data
    directory and process of the machine (no user's message is kept there)."""

    # ---- model (issue 9) -----------------------------------------------------------------
    model: str = Field("rules", alias="REACH_MODEL")
    """``rules`` (offline, the default), ``local`` (the fetched local model) or a model name."""
    base_url: str | None = Field(None, alias="REACH_BASE_URL")
    """An OpenAI-compatible endpoint (``.../v1``); ``None`` with ``local`` is the local server."""
    api_key: SecretStr | None = Field(None, alias="OPENAI_API_KEY")
    """The endpoint's key; never printed, logged or put in state."""
    temperature: float = Field(0.0, alias="REACH_TEMPERATURE")
    """Sampling temperature; 0 keeps understanding repeatable."""
    model_timeout_s: float = Field(20.0, alias="REACH_MODEL_TIMEOUT_S")
    """Per-call timeout; past it the step falls back to the rules."""
    max_tokens: int = Field(512, alias="REACH_MAX_TOKENS")
    """Always set: small local models can otherwise run on for thousands of tokens."""
    model_max_retries: int = Field(1, alias="REACH_MODEL_MAX_RETRIES")
    """Retries of one call by the client before the step falls back to the rules."""
    intent_model: str | None = Field(None, alias="REACH_INTENT_MODEL")
    """Per node: ``rules`` or a model name for intent and slots; ``None`` follows ``model``."""
    tool_model: str | None = Field(None, alias="REACH_TOOL_MODEL")
    """Per node: ``rules`` or a model name for tool selection; ``None`` follows ``model``."""
    reflect_model: str | None = Field(None, alias="REACH_REFLECT_MODEL")
    """Per node: ``rules`` or a model name for the failure critique; ``None`` follows ``model``."""
    reply_model: str | None = Field(None, alias="REACH_REPLY_MODEL")
    """Per node: ``template`` or a model name for the reply; ``None`` is ``template``."""
    local_model_port: int = Field(8181, alias="REACH_LOCAL_MODEL_PORT")
    """The loopback port ``reach model serve`` listens on."""
    local_model_threads: int = Field(2, alias="REACH_LOCAL_MODEL_THREADS")
    """CPU threads for the local server (``-t``)."""
    local_model_ctx: int = Field(4096, alias="REACH_LOCAL_MODEL_CTX")
    """Context window of the local server (``-c``)."""
    local_model_slots: int = Field(1, ge=1, alias="REACH_LOCAL_MODEL_SLOTS")
    """Requests the local server runs at once (``--parallel``). They share one ``-c`` of KV
    cache: with llama-server's default of 4, a 1,700-token finance prompt failed with HTTP 500
    "Context size has been exceeded" while other slots held theirs; on 2 cores a second
    slot adds no throughput anyway."""

    # ---- auth (issue 10) -----------------------------------------------------------------
    auth_secret: SecretStr | None = Field(None, alias="REACH_AUTH_SECRET")
    """HS256 key for access tokens; ``None`` generates one into ``data_dir / "auth.key"``."""
    token_ttl_s: float = Field(3600.0, alias="REACH_TOKEN_TTL_S")
    """Default lifetime of a token issued by ``reach token``."""

    # ---- observability (issue 11) --------------------------------------------------------
    audit_path: Path | None = Field(None, alias="REACH_AUDIT_PATH")
    """The audit and trace log (JSON lines); ``None`` is ``audit.jsonl`` in the data dir."""
    trace_stream: str = Field("reach:audit", alias="REACH_TRACE_STREAM")
    """Redis stream that also receives every record when ``redis_url`` is set; empty: off."""
    trace_stream_maxlen: int = Field(100_000, alias="REACH_TRACE_STREAM_MAXLEN")
    """Approximate cap of that stream (``XADD MAXLEN ~``), so it never grows unbounded."""
    trace_enabled: bool = Field(True, alias="REACH_TRACE")
    """Attach the trace callback handler to the graph by default."""
    otel_endpoint: str | None = Field(None, alias="OTEL_EXPORTER_OTLP_ENDPOINT")
    """OTLP/HTTP collector base URL; spans are exported only when it is set."""
    otel_service_name: str = Field("agent-reach", alias="OTEL_SERVICE_NAME")
    """``service.name`` of the exported spans."""
    metrics_host: str = Field("127.0.0.1", alias="REACH_METRICS_HOST")
    """Interface ``reach serve-metrics`` listens on."""
    metrics_port: int = Field(9464, alias="REACH_METRICS_PORT")
    """Port ``reach serve-metrics`` listens on."""

    # ---- hardening (issue 12) ------------------------------------------------------------
    vault_secret: SecretStr | None = Field(None, alias="REACH_VAULT_SECRET")
    """Key of the identity vault's tokens; ``None`` creates ``data_dir/vault.key`` (0600)."""

    # ---- scale (issue 13) ----------------------------------------------------------------
    state_keep_turns: int = Field(3, ge=1, alias="REACH_STATE_KEEP_TURNS")
    """Turns of messages the checkpointed state keeps; older ones move to the transcript."""
    state_keep_protocol: int = Field(8, ge=1, alias="REACH_STATE_KEEP_PROTOCOL")
    """Protocol messages the checkpointed state keeps; the rest are in the transcript."""
    transcript_store: Literal["sqlite", "redis"] | None = Field(
        None, alias="REACH_TRANSCRIPT_STORE"
    )
    """Where the full transcript lives; ``None`` picks Redis when ``redis_url`` is set."""
    compress_checkpoints: bool = Field(True, alias="REACH_COMPRESS_CHECKPOINTS")
    """Compress checkpoint blobs (Zstandard) in savers that store bytes (SQLite, Redis)."""
    durability: Literal["sync", "async", "exit"] = Field("sync", alias="REACH_DURABILITY")
    """When a superstep's checkpoint is written, unless a run asks otherwise (LangGraph's
    ``durability``). ``sync`` writes it before the next step starts: a step that makes a side
    effect always starts from a stored checkpoint, and on a 2-core host the turn is also
    faster than LangGraph's ``async`` default, whose background write competes with the next
    step for the interpreter (4-6 % of a Redis or SQLite turn, 2 % in memory; see
    ``bench/README.md``). ``exit`` keeps only the last checkpoint of a run: no time travel
    within a turn."""
    # workers (issue 13): the per-thread run lock
    run_lock_wait_s: float = Field(10.0, alias="REACH_RUN_LOCK_WAIT_S")
    """How long a run waits for another worker's run on the same thread before saying busy."""
    run_lock_ttl_s: float = Field(30.0, alias="REACH_RUN_LOCK_TTL_S")
    """A run lock expires this long after its last renewal (a killed worker frees it so)."""

    # ---- jobs and tool lifecycle (issue 14) ----------------------------------------------
    jobs_store: Literal["sqlite", "redis"] | None = Field(None, alias="REACH_JOBS_STORE")
    """Where jobs persist; ``None`` picks Redis when ``redis_url`` is set, else SQLite."""
    tools_store: Literal["sqlite", "redis"] | None = Field(None, alias="REACH_TOOLS_STORE")
    """Where tool lifecycle state lives; ``None`` as for ``jobs_store`` (plans: ``plan_store``)."""
    job_lease_s: float = Field(30.0, alias="REACH_JOB_LEASE_S")
    """A running job whose runner has not reported for this long is taken over."""
    job_max_attempts: int = Field(3, alias="REACH_JOB_MAX_ATTEMPTS")
    """Attempts per job before it is failed (transient errors only are retried)."""
    job_poll_initial_s: float = Field(0.5, alias="REACH_JOB_POLL_INITIAL_S")
    """First polling interval when no callback is available."""
    job_poll_max_s: float = Field(30.0, alias="REACH_JOB_POLL_MAX_S")
    """Polling intervals double up to this."""
    langgraph_url: str | None = Field(None, alias="REACH_LANGGRAPH_URL")
    """A ``langgraph dev``/server URL: a finished job starts a run on its thread there."""
    langgraph_assistant_id: str = Field("agent", alias="REACH_LANGGRAPH_ASSISTANT")
    """The assistant (graph id in ``langgraph.json``) that runs on job completion."""
    tools_state_ttl_s: float = Field(1.0, alias="REACH_TOOLS_STATE_TTL_S")
    """Workers re-read tool states at most this often (a change shows up within it)."""
    plan_cache: bool = Field(True, alias="REACH_PLAN_CACHE")
    """Reuse learned action plans (turn off to measure the difference)."""

    # ---- plans (learned action plans wired into model planning) ---------------------------
    plan_store: Literal["memory", "sqlite", "redis"] | None = Field(None, alias="REACH_PLAN_STORE")
    """Where learned plans live; ``None``: Redis when ``redis_url`` is set, else memory."""


LOCAL_MODEL_NAME = "qwen2.5-coder-1.5b-instruct"
"""The name the local server is asked for (llama-server serves whatever it loaded)."""


def local_base_url(settings: Settings | None = None) -> str:
    """The OpenAI-compatible URL of the local model server (``reach model serve``)."""
    settings = settings or get_settings()
    return f"http://127.0.0.1:{settings.local_model_port}/v1"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process's settings, parsed from the environment on first use."""
    return Settings()


__all__ = ["LOCAL_MODEL_NAME", "SecretStr", "Settings", "get_settings", "local_base_url"]
