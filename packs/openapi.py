"""A pack from an OpenAPI 3 document: each operation a tool, called over HTTP.

An operation's ``operationId`` names the tool, its ``summary``/``description`` describe it,
its path and query parameters and its JSON request body's properties are the arguments
(JSON Schema types as Python types, ``enum`` as a ``Literal``). The same safe defaults as
for functions: ``GET`` and ``HEAD`` read, any other method writes (confirmed first, never
retried) unless an annotation says otherwise. A 4xx answer is the user's to fix (its body
is the message); a 5xx or a dropped connection is the backend's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import httpx
from pydantic import BaseModel, ConfigDict, Field, create_model

from packs.functions import ToolAnnotation
from packs.pack import Pack, scenario_of
from tools.executor.errors import TransientToolError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

READ_METHODS = frozenset({"get", "head"})
METHODS = ("get", "post", "put", "patch", "delete", "head")
_TYPES: dict[str, type] = {"string": str, "integer": int, "number": float, "boolean": bool}


def pack_from_openapi(
    document: Mapping[str, Any],
    *,
    policy: str,
    base_url: str | None = None,
    name: str | None = None,
    annotations: Mapping[str, ToolAnnotation] | None = None,
    client: httpx.Client | None = None,
    roles: Iterable[str] = ("customer",),
) -> Pack:
    """Build a pack whose tools call the operations of ``document`` at ``base_url``."""
    annotations = annotations or {}
    servers = document.get("servers") or [{}]
    root = (base_url or servers[0].get("url") or "").rstrip("/")
    http = client or httpx.Client(timeout=10.0)
    pack = name or str((document.get("info") or {}).get("title", "api")).lower().replace(" ", "_")
    cards = []
    for path, item in (document.get("paths") or {}).items():
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            note = annotations.get(str(operation.get("operationId")), ToolAnnotation())
            cards.append(_card(pack, root, path, method, operation, note, http))
    return Pack(
        scenario=scenario_of(pack, cards, roles=roles),
        policy=policy,
        functions={card.name: card.name for card in cards},
    )


def _card(
    pack: str,
    root: str,
    path: str,
    method: str,
    operation: Mapping[str, Any],
    note: ToolAnnotation,
    http: httpx.Client,
) -> ToolCard:
    operation_id = str(operation.get("operationId") or "")
    if not operation_id:
        msg = f"{method.upper()} {path}: an operation needs an operationId to become a tool"
        raise ValueError(msg)
    fields: dict[str, Any] = {}  # create_model's keyword arguments: (type, field) pairs
    where: dict[str, str] = {}
    for parameter in operation.get("parameters") or []:
        location = parameter.get("in")
        if location not in ("path", "query"):
            continue
        required = bool(parameter.get("required")) or location == "path"
        fields[parameter["name"]] = _field(parameter.get("schema") or {}, required, parameter)
        where[parameter["name"]] = location
    body = (((operation.get("requestBody") or {}).get("content") or {}).get("application/json")
            or {}).get("schema") or {}  # fmt: skip
    needed = set(body.get("required") or [])
    for prop, schema in (body.get("properties") or {}).items():
        fields[prop] = _field(schema, prop in needed, schema)
        where[prop] = "body"
    model: type[BaseModel] = create_model(
        f"{operation_id.title().replace('_', '')}Args",
        __config__=ConfigDict(extra="forbid"),
        **fields,
    )
    writes = note.side_effect if note.side_effect is not None else method not in READ_METHODS
    confirm = note.confirm if note.confirm is not None else writes
    summary = str(operation.get("summary") or operation.get("description") or "").strip()
    if not summary:
        msg = f"{operation_id}: an operation needs a summary or description"
        raise ValueError(msg)

    def handler(args: BaseModel, ctx: ToolContext) -> Any:
        values = args.model_dump(mode="json", exclude_none=True)
        url = root + path.format(**{k: v for k, v in values.items() if where[k] == "path"})
        query = {k: v for k, v in values.items() if where[k] == "query"}
        json_body = {k: v for k, v in values.items() if where[k] == "body"} or None
        try:
            response = http.request(method.upper(), url, params=query, json=json_body)
        except httpx.TransportError as error:
            raise ConnectionError(f"{operation_id}: {type(error).__name__}") from error
        if response.status_code >= 500:
            raise TransientToolError(f"{operation_id}: HTTP {response.status_code}")
        if response.status_code >= 400:
            raise UserFixableError(response.text[:300] or f"HTTP {response.status_code}")
        try:
            return response.json()
        except ValueError:
            return response.text

    return ToolCard(
        name=note.name or operation_id,
        description=summary,
        when_to_use=note.when_to_use or summary,
        when_not_to_use=note.when_not_to_use
        or (
            "Without the user's explicit yes to these exact values."
            if confirm
            else "To change anything: it only reads."
        ),
        parameters=model,
        returns=str(
            ((operation.get("responses") or {}).get("200") or {}).get("description")
            or "The operation's JSON answer."
        ),  # fmt: skip
        handler=handler,
        idempotent=note.idempotent if note.idempotent is not None else not writes,
        permission=note.permission or f"{pack}:{'write' if writes else 'read'}",
        domain=pack,
        risk="high" if confirm else "low",
        side_effect=writes,
        timeout_s=note.timeout_s,
        requires=note.requires,
    )


def _field(schema: Mapping[str, Any], required: bool, where: Mapping[str, Any]) -> Any:
    annotation = _python_type(schema)
    description = where.get("description") or schema.get("description")
    default = ... if required else schema.get("default")
    if not required and default is None:
        annotation = annotation | None
    return (annotation, Field(default, description=description))


def _python_type(schema: Mapping[str, Any]) -> Any:
    if schema.get("enum"):
        return Literal[tuple(schema["enum"])]
    kind = schema.get("type")
    if kind == "array":
        return list[_python_type(schema.get("items") or {})]  # type: ignore[misc]
    if kind == "object":
        return dict[str, Any]
    return _TYPES.get(str(kind), Any)


__all__ = ["pack_from_openapi"]
