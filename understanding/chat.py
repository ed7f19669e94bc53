"""Which chat model a step uses: the settings' choice per node, and the client built for it.

``REACH_MODEL`` (and ``REACH_<NODE>_MODEL``) name ``off``, ``local`` (the local llama-server,
``reach model serve``), ``mixed`` or an OpenAI-compatible model; ``node_choice`` reads the
choice of one node, ``chat_model_for`` builds its ``ChatOpenAI`` client.
"""

from __future__ import annotations

from typing import Any

from pydantic import SecretStr

from config.settings import LOCAL_MODEL_NAME, local_base_url


def make_chat_model(
    *,
    model: str,
    base_url: str | None,
    api_key: str | None,
    temperature: float = 0.0,
    timeout_s: float = 20.0,
    max_tokens: int = 512,
    max_retries: int = 1,
    logprobs: bool = True,
) -> Any:
    """A ``ChatOpenAI`` with every limit set (``max_tokens`` always: small models run on)."""
    # imported here: the OpenAI client's import is a second of every process's start-up (each
    # test worker, ``langgraph dev``, each ``reach`` command), with or without a model
    from langchain_openai import ChatOpenAI  # noqa: PLC0415

    options: dict[str, Any] = {}  # ChatOpenAI keyword arguments, added as configured
    if logprobs:
        options.update(logprobs=True, top_logprobs=3)
    return ChatOpenAI(
        model=model,
        base_url=base_url,
        api_key=SecretStr(api_key or "not-needed"),  # local servers want a header, not a key
        temperature=temperature,
        timeout=timeout_s,
        max_completion_tokens=max_tokens,
        max_retries=max_retries,
        **options,
    )


MIXED = "mixed"
"""``mixed`` or ``mixed:<model>``: the rules first, the model only below ``THRESHOLD``."""


def parse_choice(choice: str | None) -> tuple[str | None, bool]:
    """Split a model choice into (model name or ``None`` for rules, mixed?)."""
    if not choice or choice in ("rules", "template"):
        return None, False
    if choice == MIXED or choice.startswith(MIXED + ":"):
        return choice.partition(":")[2] or "local", True
    return choice, False


def chat_model_for(choice: str | None, settings: Any) -> Any | None:
    """Build the chat model ``choice`` names (``local`` is the fetched local server)."""
    name, _ = parse_choice(choice)
    if name is None:
        return None
    base_url = settings.base_url
    if name == "local":
        name, base_url = LOCAL_MODEL_NAME, base_url or local_base_url(settings)
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return make_chat_model(
        model=name,
        base_url=base_url,
        api_key=key,
        temperature=settings.temperature,
        timeout_s=settings.model_timeout_s,
        max_tokens=settings.max_tokens,
        max_retries=settings.model_max_retries,
    )


OPT_IN_NODES = frozenset({"tool", "reflect", "reply"})
"""Steps that use a model only when their own setting names one (``REACH_TOOL_MODEL``, ...).

Understanding makes the one model call a turn (a structured list of commands, slots
included); planning the calls again, critiquing a failure or phrasing the reply would each
cost the user seconds more on a CPU model, so ``REACH_MODEL`` and a run's ``Context.model``
do not turn them on."""


def node_choice(settings: Any, node: str, run_model: str | None = None) -> str:
    """The choice for one node: the run's ``Context.model``, else ``REACH_<NODE>_MODEL``.

    ``tool``, ``reflect`` and ``reply`` follow only their own setting (``OPT_IN_NODES``):
    ``template`` for the reply, ``rules`` for the others, unless it names a model.
    Understanding (``intent``) follows the run's choice, then ``REACH_INTENT_MODEL``, then
    ``REACH_MODEL``.
    """
    if node in OPT_IN_NODES:
        default = "template" if node == "reply" else "rules"
        return getattr(settings, f"{node}_model", None) or default
    if run_model:
        return run_model
    return getattr(settings, f"{node}_model", None) or settings.model


def chat_model_from_settings(settings: Any, node: str = "intent") -> Any | None:
    """The chat model a node should use, or ``None`` for rules (``REACH_<NODE>_MODEL``)."""
    return chat_model_for(node_choice(settings, node), settings)


def prompt_tokens(raw: Any) -> int | None:
    """The prompt tokens a call's raw answer reports (LangChain's usage, else OpenAI's)."""
    usage = getattr(raw, "usage_metadata", None) or {}
    tokens = usage.get("input_tokens") if isinstance(usage, dict) else None
    if tokens is None:
        meta = (getattr(raw, "response_metadata", None) or {}).get("token_usage") or {}
        tokens = meta.get("prompt_tokens")
    return int(tokens) if isinstance(tokens, int | float) else None
