"""Scenario packs made from tool functions and a policy text, with no hand-written rules.

A team with its own functions (an order system, a booking API) and a policy document gets a
``Scenario`` from them: tool cards from the signatures and docstrings (``packs.functions``;
or from an OpenAPI document, ``packs.openapi``), a task per tool, generic wording and result
describers (``packs.pack``), and, in place of cue tables, a model command generator that has
the policy in its prompt and the tool cards as its options (``packs.understanding``). The
executor runs such a pack's calls as any other: validation, permission, confirmation before
every write, idempotency, retries, masking, audit, the envelope.

May import ``contract`` (the scenario contract), ``understanding`` (the command language and
the chat model client), ``tools`` (registry, errors) and the layers below; never a shipped
scenario (``scenarios | packs`` are one layer of independent siblings), nothing under
``nodes`` or ``graph``.
"""

from packs.functions import (
    Refusal,
    ToolAnnotation,
    card_from_function,
    parameters_model,
    tool,
)
from packs.pack import Pack, pack_from_functions, pack_from_module

__all__ = [
    "Pack",
    "Refusal",
    "ToolAnnotation",
    "card_from_function",
    "pack_from_functions",
    "pack_from_module",
    "parameters_model",
    "tool",
]
