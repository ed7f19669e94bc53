"""Tool cards from typed Python functions: the signature gives the schema, the docstring the words.

``card_from_function(fn)`` reads ``fn``'s signature (each parameter needs a type; a default
makes it optional) and its Google- or reST-style docstring (the first paragraph is the
description, ``Args:`` describe the parameters, ``Returns:`` the result) and builds a
``ToolCard`` whose pydantic model closes the arguments to unknown fields. What a signature
cannot tell (does it change anything? must a person say yes first?) comes from a small
``ToolAnnotation``, attached with ``@tool(...)`` or passed beside the function, with safe
defaults: a function whose verb is not a known read verb is taken to write, and a write is
high-risk (confirmed first), not idempotent, and never retried.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, get_type_hints

from docstring_parser import parse as parse_docstring
from pydantic import BaseModel, ConfigDict, Field, create_model

from tools.executor.errors import ResourceNotFoundError, ToolError, UserFixableError
from tools.registry.cards import ToolCard
from tools.registry.context import ToolContext

ANNOTATION_ATTR = "__reach_tool__"
READ_VERBS = frozenset(
    {
        "get",
        "find",
        "list",
        "search",
        "query",
        "check",
        "lookup",
        "look",
        "show",
        "calculate",
        "count",
        "read",
        "view",
        "describe",
        "estimate",
    }
)
"""Verbs that name a read; any other verb is taken to write (the safe default)."""
SKIPPED_PARAMETERS = frozenset({"self", "cls"})
Invoke = Callable[[str, BaseModel], Any]
"""``invoke(function_name, arguments)``: runs the function (or sends the call where it runs)."""


@dataclass(frozen=True, kw_only=True)
class ToolAnnotation:
    """What a signature cannot say about a tool; ``None`` fields take the safe default."""

    name: str | None = None
    """The card's name when the function's is not a ``verb_object`` one (``calculate``)."""
    side_effect: bool | None = None
    """Changes something outside; ``None``: inferred from the verb (unknown verbs write)."""
    confirm: bool | None = None
    """A person says yes before it runs (risk ``high``); ``None``: every write is confirmed."""
    idempotent: bool | None = None
    """Safe to run twice (retried on a transient failure); ``None``: reads only."""
    when_to_use: str | None = None
    """``None``: the docstring's first sentence."""
    when_not_to_use: str | None = None
    """``None``: a sentence for reads (never to change anything) or writes (never without a
    yes to these exact values)."""
    permission: str | None = None
    """``domain:action``; ``None``: ``<pack>:read`` or ``<pack>:write``."""
    timeout_s: float = 10.0
    """Deadline of one attempt."""
    requires: tuple[str, ...] = ()
    """Tools that must have succeeded earlier in the task."""
    examples: tuple[str, ...] = ()
    """Requests users make for it, in Chinese or English ("book me into C-0620-YOGA"):
    beside the docstring's description and ``Examples:``, what the recognizer learns."""
    check: Callable[..., Any] | None = None
    """A precondition that reads the backend, run before the user is asked to confirm:
    called with the call's arguments it takes (by name); it returns ``None`` when the call
    may go ahead, else why not (a sentence, or ``{"zh": …, "en": …}``), or raises a
    ``ValueError`` (a ``Refusal``) or a ``LookupError`` saying why."""
    describe: Callable[[Any, str], str | None] | None = None
    """The team's own wording of a successful result: ``describe(data, language)``;
    ``None`` (or a ``None`` answer): the generic describer words it from the card."""


class Refusal(ValueError):
    """A function's (or a check's) refusal, said in both languages: ``Refusal(en, zh=…)``.

    A plain ``ValueError`` is said in the words it was raised with, in any language.
    """

    def __init__(self, en: str, *, zh: str | None = None) -> None:
        """Keep the English reason and, when given, the Chinese one."""
        super().__init__(en)
        self.text: dict[str, str] = {"en": en, "zh": zh or en}


def _raised(error: Exception) -> ToolError:
    """What a function's own ``ValueError``/``LookupError`` is: the user's to fix, or not found."""
    message = str(error) or type(error).__name__
    if isinstance(error, Refusal):
        return UserFixableError(message, details={"reason": dict(error.text)})
    if isinstance(error, LookupError) and not isinstance(error, KeyError | IndexError):
        return ResourceNotFoundError(message, details={"reason": {"en": message, "zh": message}})
    return UserFixableError(message, details={"reason": {"en": message, "zh": message}})


def tool(**fields: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Annotate a function for ``pack_from_functions``: ``@tool(side_effect=False)``."""
    if "examples" in fields:
        fields["examples"] = tuple(fields["examples"])
    annotation = ToolAnnotation(**fields)

    def mark(fn: Callable[..., Any]) -> Callable[..., Any]:
        setattr(fn, ANNOTATION_ATTR, annotation)
        return fn

    return mark


def annotation_of(fn: Callable[..., Any], given: ToolAnnotation | None = None) -> ToolAnnotation:
    """Return ``given``, else the ``@tool`` annotation on ``fn``, else the defaults."""
    if given is not None:
        return given
    found = getattr(fn, ANNOTATION_ATTR, None)
    return found if isinstance(found, ToolAnnotation) else ToolAnnotation()


def writes_by_name(name: str) -> bool:
    """Whether a function named ``name`` is taken to write when nothing says otherwise."""
    verb = name.split("_", 1)[0].lower()
    return verb not in READ_VERBS


def parameters_model(fn: Callable[..., Any], *, model_name: str | None = None) -> type[BaseModel]:
    """Build the closed pydantic model of ``fn``'s parameters, described by its docstring.

    Raises ``TypeError`` for a parameter with no type (the schema would say nothing) and
    for ``*args``/``**kwargs``.
    """
    signature = inspect.signature(fn)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except (NameError, TypeError):  # a forward reference it cannot resolve: the raw ones
        hints = {}
    described = {
        p.arg_name: (p.description or "") for p in parse_docstring(fn.__doc__ or "").params
    }
    fields: dict[str, Any] = {}  # create_model's keyword arguments: (type, field) pairs
    for name, parameter in signature.parameters.items():
        if name in SKIPPED_PARAMETERS:
            continue
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            msg = f"{fn.__name__}: *args/**kwargs cannot be described to a model"
            raise TypeError(msg)
        annotation = hints.get(name, parameter.annotation)
        if annotation is inspect.Parameter.empty:
            msg = f"{fn.__name__}: parameter {name!r} needs a type annotation"
            raise TypeError(msg)
        default = ... if parameter.default is inspect.Parameter.empty else parameter.default
        description = " ".join(described.get(name, "").split()) or None
        fields[name] = (annotation, Field(default, description=description))
    title = model_name or "".join(part.title() for part in fn.__name__.split("_")) + "Args"
    model: type[BaseModel] = create_model(title, __config__=ConfigDict(extra="forbid"), **fields)
    return model


def required_parameters(model: type[BaseModel]) -> tuple[str, ...]:
    """The parameters a call must give, in declaration order."""
    return tuple(name for name, info in model.model_fields.items() if info.is_required())


def direct_invoke(functions: Mapping[str, Callable[..., Any]]) -> Invoke:
    """Call the function itself; a ``ValueError``/``LookupError`` it raises is the user's to fix."""

    def invoke(name: str, arguments: BaseModel) -> Any:
        values = {field: getattr(arguments, field) for field in type(arguments).model_fields}
        try:
            return functions[name](**values)
        except ToolError:
            raise
        except (ValueError, LookupError) as error:
            raise _raised(error) from error

    return invoke


def card_from_function(
    fn: Callable[..., Any],
    annotation: ToolAnnotation | None = None,
    *,
    pack: str,
    invoke: Invoke | None = None,
) -> ToolCard:
    """Build ``fn``'s tool card; its handler runs ``invoke(fn.__name__, arguments)``."""
    note = annotation_of(fn, annotation)
    name = note.name or fn.__name__
    writes = note.side_effect if note.side_effect is not None else writes_by_name(fn.__name__)
    confirm = note.confirm if note.confirm is not None else writes
    idempotent = note.idempotent if note.idempotent is not None else not writes
    doc = parse_docstring(fn.__doc__ or "")
    summary = " ".join((doc.short_description or "").split())
    if not summary:
        msg = f"{fn.__name__}: a tool needs a docstring that says what it does"
        raise TypeError(msg)
    long = " ".join((doc.long_description or "").split())
    returns = " ".join(((doc.returns.description if doc.returns else None) or "").split())
    parameters = parameters_model(fn)
    call = invoke or direct_invoke({fn.__name__: fn})
    function_name = fn.__name__

    def handler(args: BaseModel, ctx: ToolContext) -> Any:
        return call(function_name, args)

    return ToolCard(
        precondition=_precondition(note.check, name),
        name=name,
        description=f"{summary} {long}".strip(),
        when_to_use=note.when_to_use or _first_sentence(summary),
        when_not_to_use=note.when_not_to_use
        or (
            "Without the user's explicit yes to these exact values."
            if confirm
            else "To change anything: it only reads."
            if not writes
            else "When the user did not ask for it."
        ),
        parameters=parameters,
        returns=returns or _return_name(fn),
        handler=handler,
        idempotent=idempotent,
        permission=note.permission or f"{pack}:{'write' if writes else 'read'}",
        domain=pack,
        risk="high" if confirm else "low",
        side_effect=writes,
        timeout_s=note.timeout_s,
        requires=note.requires,
    )


def _precondition(
    check: Callable[..., Any] | None, name: str
) -> Callable[[BaseModel, ToolContext], None] | None:
    """The card's precondition of a ``check``: its refusal raised as the user's to fix."""
    if check is None:
        return None
    accepted = inspect.signature(check).parameters
    takes_all = any(p.kind is p.VAR_KEYWORD for p in accepted.values())

    def precondition(args: BaseModel, ctx: ToolContext) -> None:
        values = {
            field: getattr(args, field)
            for field in type(args).model_fields
            if takes_all or field in accepted
        }
        try:
            why = check(**values)
        except ToolError:
            raise
        except (ValueError, LookupError) as error:
            raise _raised(error) from error
        if why is None or why is True:
            return
        text = dict(why) if isinstance(why, Mapping) else {"en": str(why), "zh": str(why)}
        text.setdefault("en", next(iter(text.values()), ""))
        text.setdefault("zh", text["en"])
        raise UserFixableError(
            f"{name} refused by its check: {text['en']}", details={"reason": text}
        )

    return precondition


def renamed(card: ToolCard, name: str) -> ToolCard:
    """The same card under another name (the handler still calls the original function)."""
    return replace(card, name=name)


def _first_sentence(text: str) -> str:
    match = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return match.group(1) if match else text


def _return_name(fn: Callable[..., Any]) -> str:
    annotation = inspect.signature(fn).return_annotation
    if annotation is inspect.Signature.empty:
        return "The function's result."
    return f"A {getattr(annotation, '__name__', str(annotation))}."


__all__ = [
    "READ_VERBS",
    "Invoke",
    "Refusal",
    "ToolAnnotation",
    "annotation_of",
    "card_from_function",
    "direct_invoke",
    "parameters_model",
    "renamed",
    "required_parameters",
    "tool",
    "writes_by_name",
]
