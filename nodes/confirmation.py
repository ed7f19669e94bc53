"""Confirmation of high-risk actions: what to ask, and how to read the answer.

Both functions are pure; the node that pauses with ``interrupt()`` calls them.

``confirmation_request`` builds the interrupt value in LangChain v1's HITL shape
(``langchain.agents.middleware.human_in_the_loop.HITLRequest``: ``action_requests`` and
``review_configs``), the shape ``HumanInTheLoopMiddleware`` emits and agent-chat-ui draws as
Approve / Edit / Reject, plus a human-readable ``question`` for chat and the CLI.

``read_decisions`` reads what comes back: LangChain's ``{"decisions": [...]}`` (one per
action, in order), the project's own ``{"decision": ...}`` (for every action), or the user's
own words ("确认", "yes", "算了"). Anything else, or the wrong number of decisions, is
``None``: ask again and change nothing. An answer that is not understood is never read as
approval, nor as rejection.

``langchain`` (v1) is not a dependency of this project, so the HITL types below replicate
``HITLRequest``, ``ActionRequest`` and ``ReviewConfig`` field for field (langchain 1.x);
``tests/unit/test_confirmation.py`` validates the payload against them with pydantic.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from config.limits import JsonValue
from contract.scenario import ScenarioSet
from nodes.call_words import (
    CallView,
    CallWords,
    Field,
    edited_arguments,
    field_label,
    generic_sentence,
)
from nodes.wording import GENERIC, Voice
from security.pii import mask_pii
from security.vault import TOKEN_PREFIX
from tools.executor.pipeline import Decision, PreparedCall
from tools.registry.types import ValidatedArguments
from understanding.lexical import plain_answer

HITLDecisionType = Literal["approve", "edit", "reject", "respond"]


class ActionView(TypedDict):
    """One action of the deprecated ``actions`` list: the tool and its masked arguments."""

    tool: str
    description: str
    arguments: ValidatedArguments


class ActionRequest(TypedDict):
    """One action for review (LangChain v1 ``ActionRequest``)."""

    name: str
    """The tool's name."""
    args: ValidatedArguments
    """Its arguments as a person may see them (masked)."""
    description: NotRequired[str]
    """What will happen, in the user's language."""


class ReviewConfig(TypedDict):
    """What a reviewer may do with one action (LangChain v1 ``ReviewConfig``)."""

    action_name: str
    """The action it applies to."""
    allowed_decisions: list[HITLDecisionType]
    """``approve`` and ``reject`` always; ``edit`` unless an argument is a secret."""
    args_schema: NotRequired[dict[str, JsonValue]]
    """JSON schema of the arguments, when editing is allowed."""


class HITLRequest(TypedDict):
    """LangChain v1 ``HITLRequest``: the actions to review and how each may be reviewed."""

    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]


class ReviewField(TypedDict):
    """One field of an action as the card shows it: its label and the argument behind it."""

    label: str
    argument: str
    editable: bool
    """The card shows the value itself, so an edit of it is taken as it is."""


class ConfirmationRequest(HITLRequest):
    """The interrupt value: a ``HITLRequest`` plus the question in words."""

    type: Literal["confirm_action"]
    """Marks the interrupt as a confirmation (the CLI and tests look for it)."""
    question: str
    """The whole request as a sentence to show in a chat or a terminal."""
    actions: list[ActionView]
    """Deprecated ``{tool, description, arguments}`` view, kept until callers read
    ``action_requests``; it holds the same masked arguments."""
    fields: list[list[ReviewField]]
    """Per action, which argument each label of its ``args`` stands for (an edit comes back
    by label)."""


SECRET_SHOWN = "******"
"""What a reviewer sees in place of a PIN or a vault token with no display form."""
_SECRET_NAME = re.compile(r"(^|_)(pin|password|passcode|passwd|cvv|otp)($|_)", re.IGNORECASE)


def render(key: str, language: str, **values: Any) -> str:
    """Fill one of the generic confirmation sentences."""
    text = GENERIC[key]
    return (text.get(language) or text["zh"]).format(**values)


def is_secret_argument(name: str, value: Any) -> bool:
    """Tell whether an argument must be neither shown nor edited: a vault token or a PIN."""
    return bool(_SECRET_NAME.search(name)) or (
        isinstance(value, str) and value.startswith(TOKEN_PREFIX)
    )


def shown_arguments(call: PreparedCall, display: Mapping[str, str]) -> ValidatedArguments:
    """Return the arguments as a reviewer sees them.

    A stored value with a display form (a vault token's masked ID number) shows that form;
    other secrets show ``******``; everything else is masked by ``mask_pii``.
    """
    masked = mask_pii(call.arguments)
    shown: ValidatedArguments = {}
    for key, raw in call.arguments.items():
        if str(raw) in display:
            shown[key] = display[str(raw)]
        elif is_secret_argument(key, raw):
            shown[key] = SECRET_SHOWN
        else:
            shown[key] = masked[key]
    return shown


def confirmation_request(
    waiting: Sequence[PreparedCall],
    language: str,
    *,
    display: Mapping[str, str] | None = None,
    words: CallWords | None = None,
) -> ConfirmationRequest:
    """Build the interrupt value asking a person to review ``waiting``, in order.

    Args:
        waiting: The prepared high-risk calls, in the order decisions must come back.
        language: ``zh`` or ``en``, for the description and the question.
        display: Stored values (vault tokens) mapped to what a person should see instead.
        words: How each call is said (``nodes.call_words``: the scenario's sentence, the
            task's name, the arguments' labels); ``None``: from the card alone.

    Returns:
        A dict that validates as LangChain v1's ``HITLRequest``: per action, ``name`` is
        what the action is called for a person, ``description`` the sentence saying what
        will happen, ``args`` the arguments a person may see under their labels (masked);
        ``review_configs`` allow ``edit`` only when every value shown is the value itself
        and none is a secret. Plus ``type``, ``question`` (the sentences and the request to
        answer), ``fields`` (label → argument) and the deprecated ``actions``. No tool name,
        ``key=value`` or request id reaches what a person reads.
    """
    display = display or {}
    requests: list[ActionRequest] = []
    configs: list[ReviewConfig] = []
    legacy: list[ActionView] = []
    fields: list[list[ReviewField]] = []
    for call in waiting:
        args = shown_arguments(call, display)
        view = (words or _card_words(language))(call, args)
        shown: ValidatedArguments = {f.label: f.shown for f in view.fields}
        requests.append({"name": view.title, "args": shown, "description": view.sentence})
        secret = any(is_secret_argument(k, v) for k, v in call.arguments.items())
        editable = not secret and bool(view.fields) and all(f.as_stored for f in view.fields)
        config: ReviewConfig = {
            "action_name": view.title,
            "allowed_decisions": ["approve", "edit", "reject"]
            if editable
            else ["approve", "reject"],
        }
        if editable:
            config["args_schema"] = _labelled_schema(call, view.fields)
        configs.append(config)
        fields.append(
            [{"label": f.label, "argument": f.argument, "editable": editable} for f in view.fields]
        )
        legacy.append({"tool": call.card.name, "description": view.sentence, "arguments": args})
    question = "\n".join(
        [*(r.get("description", r["name"]) for r in requests), render("confirm_question", language)]
    )
    return {
        "type": "confirm_action",
        "question": question,
        "action_requests": requests,
        "review_configs": configs,
        "actions": legacy,
        "fields": fields,
    }


def _card_words(language: str) -> CallWords:
    """Word a call from its card alone (no scenario at hand): description and labels."""
    voice = Voice(ScenarioSet(()), language)

    def words(call: PreparedCall, shown: ValidatedArguments) -> CallView:
        fields = tuple(
            Field(name, label, value, as_stored=True)
            for name, value in shown.items()
            if value not in (None, "")
            and name not in call.card.evidence_fields
            and (label := field_label(call, name, voice, described=True)) is not None
        )
        title = call.card.description.split(".")[0].strip() or call.card.description
        return CallView(title, generic_sentence(call.card.description, fields, voice), fields)

    return words


def _labelled_schema(call: PreparedCall, fields: Sequence[Field]) -> dict[str, JsonValue]:
    """The arguments' JSON schema under the labels the card shows them by."""
    schema = call.card.parameters.model_json_schema()
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return {
        "type": "object",
        "properties": {f.label: properties.get(f.argument, {}) for f in fields},
        "required": [f.label for f in fields if f.argument in required],
    }


def read_decisions(
    answer: Any, count: int, *, request: Mapping[str, Any] | None = None
) -> list[Decision] | None:
    """Read a resume value as one decision per reviewed action, or ``None`` to ask again.

    Args:
        answer: What the person sent back. Understood shapes:
            - ``{"decisions": [d, ...]}`` (LangChain ``HITLResponse``, agent-chat-ui), one per
              action in order, each ``{"type": "approve"}``,
              ``{"type": "edit", "edited_action": {"name": ..., "args": {...}}}``,
              ``{"type": "reject", "message": ...}`` or ``{"type": "respond", "message": ...}``
              (a reply instead of running: not run, like a rejection);
            - a bare list of such decisions, or one bare decision when ``count`` is 1;
            - ``{"decision": "approve" | "reject" | "edit", "parameters": {...}}`` (the
              project's own; applies to every action);
            - the user's words: "确认", "好的", "yes" approve; "算了", "不要", "取消", "no" reject;
            - a ``Decision`` (in-process callers), applied to every action.
        count: How many actions were in the request.
        request: The interrupt value that was sent (``confirmation_request``'s result). With
            it, an edit must name its action's tool and be allowed by its review config, and
            only the arguments the reviewer actually changed are kept (the rest were shown
            masked and must not overwrite the real values).

    Returns:
        ``count`` decisions in order, an ``edit`` carrying only the changed arguments (to
        merge over the originals; an edit that changes nothing is an approval); or ``None``
        for an unknown shape, an unreadable decision, a disallowed edit or a count mismatch,
        meaning: ask again and change nothing. A reject's ``message`` is not carried
        (``Decision`` has no field for it yet).
    """
    if count < 1:
        return None
    if isinstance(answer, Decision):
        return [answer] * count
    if isinstance(answer, str):
        single = _read_words(answer)
        return None if single is None else [single] * count
    if isinstance(answer, Mapping) and "decisions" in answer:
        items = answer["decisions"]
    elif isinstance(answer, Mapping) and "type" in answer and count == 1:
        items = [answer]
    elif isinstance(answer, list | tuple):
        items = answer
    elif isinstance(answer, Mapping) and "decision" in answer:
        single = _read_project_decision(answer)
        if single is None or not all(
            single.kind != "edit" or _edit_allowed(request, index) for index in range(count)
        ):
            return None
        return [single] * count
    else:
        return None
    if not isinstance(items, list | tuple) or len(items) != count:
        return None
    decisions: list[Decision] = []
    for index, item in enumerate(items):
        decision = item if isinstance(item, Decision) else _read_hitl_decision(item, request, index)
        if decision is None:
            return None
        decisions.append(decision)
    return decisions


def read_decision(answer: Any) -> Decision:
    """Read an answer to a one-action request; anything not understood is a rejection.

    Compatibility for callers that cannot ask again yet. New code calls ``read_decisions``
    and asks again on ``None`` instead.
    """
    decisions = read_decisions(answer, 1)
    return decisions[0] if decisions else Decision("reject")


def _read_words(text: str) -> Decision | None:
    """Read the user's own words; a question or anything unclear is ``None``."""
    answer = plain_answer(text)
    return None if answer is None else Decision(answer)


def _read_project_decision(answer: Mapping[str, Any]) -> Decision | None:
    """Read ``{"decision": ..., "parameters": ...}``."""
    kind = str(answer.get("decision", "")).strip().lower()
    if kind == "approve":
        return Decision("approve")
    if kind == "reject":
        return Decision("reject")
    if kind == "edit" and isinstance(answer.get("parameters"), Mapping):
        return Decision("edit", dict(answer["parameters"]))
    return None


def _read_hitl_decision(
    item: Any, request: Mapping[str, Any] | None, index: int
) -> Decision | None:
    """Read one LangChain decision (or agent-inbox's ``accept``/``ignore``)."""
    if not isinstance(item, Mapping):
        return None
    kind = str(item.get("type", "")).strip().lower()
    if kind in {"approve", "accept"}:
        return Decision("approve")
    if kind in {"reject", "respond", "ignore"}:
        return Decision("reject")
    if kind != "edit":
        return None
    edited = item.get("edited_action")
    if not isinstance(edited, Mapping):
        return None
    args = edited.get("args", edited.get("arguments"))
    if not isinstance(args, Mapping) or not _edit_allowed(request, index):
        return None
    expected = _action_request(request, index)
    if expected is None:
        return Decision("edit", dict(args))
    if edited.get("name", expected.get("name")) != expected.get("name"):
        return None  # an edit may change arguments, never which tool runs
    shown = expected.get("args") or {}
    changed = {key: value for key, value in args.items() if shown.get(key) != value}
    if not changed:
        return Decision("approve")
    mapped = edited_arguments(_fields_of(request, index), changed)
    return None if mapped is None else Decision("edit", mapped)


def _fields_of(request: Mapping[str, Any] | None, index: int) -> list[Mapping[str, Any]] | None:
    """Which argument each label of action ``index`` stands for, when the request says."""
    every = (request or {}).get("fields")
    if not isinstance(every, list) or index >= len(every):
        return None
    return list(every[index])


def _action_request(request: Mapping[str, Any] | None, index: int) -> Mapping[str, Any] | None:
    """Return the ``index``-th action request that was sent, if known."""
    if request is None:
        return None
    actions = request.get("action_requests") or []
    return actions[index] if index < len(actions) else None


def _edit_allowed(request: Mapping[str, Any] | None, index: int) -> bool:
    """Tell whether the request sent allowed editing action ``index`` (unknown: yes)."""
    if request is None:
        return True
    configs = request.get("review_configs") or []
    if index >= len(configs):
        return False
    return "edit" in (configs[index].get("allowed_decisions") or [])
