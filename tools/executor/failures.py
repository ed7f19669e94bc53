"""One failure vocabulary: every way a tool call can end, what it means, said once.

The executor's envelope says *how* a call ended (``status``, ``error_type``, ``data``);
``classify`` turns that into one ``Outcome`` class, and ``MEANINGS`` gives each class one
user-facing meaning in zh and en, what it says about side effects, and the words by which a
reply can be recognised as naming it (``said``; the failure-matrix test and ``reach eval``
read replies with it).

Who words what:

- a scenario's describer words its own successes and the two classes that are about its
  own data: ``not_found`` ("没有找到订单 OD-…") and ``refused`` (a domain refusal: "已送达，
  无法取消"). Someone else's resource is ``not_found`` too, in every byte;
- every other class is generic: the reply, the hand-off and the client view all say the
  sentence given here, whatever the tool. A describer never sees such a result, and one that
  gets a failure it does not know answers ``None``: the generic sentence is said instead.

Side effects (``Meaning.effect``): ``none`` — the executor knows nothing ran (refused before
the handler, or the handler failed without an effect); ``unknown`` — it may have happened;
``undone`` — it happened and a compensating action reversed it; ``held`` — it was recorded
and waits for a person's review. Only ``none`` may be said as "nothing was done".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal[
    "not_found",
    "invalid",
    "not_permitted",
    "refused",
    "disabled",
    "sunset",
    "unavailable",
    "timeout",
    "unknown",
    "rate_limited",
    "conflict",
    "pending_review",
    "compensated",
    "declined",
    "not_requested",
    "awaiting",
]
"""Every class of outcome other than a plain success."""

Effect = Literal["none", "unknown", "undone", "held"]
"""What a class says about the call's side effect."""

PENDING_REVIEW = "pending_review"
"""The ``data.status`` of a success that was recorded but waits for a person's review."""


@dataclass(frozen=True)
class Meaning:
    """What one class means for the user."""

    effect: Effect
    """What happened to the side effect (see the module docstring)."""
    text: Mapping[str, str]
    """The sentence in zh and en (``{task}``, ``{reference}``, ``{reason}``, ``{sunset}``)."""
    short: Mapping[str, str]
    """The same meaning without placeholders, for the client view of a tool message."""
    cues: Mapping[str, tuple[str, ...]]
    """Words that name this class in a reply (the sentence holds one of them)."""
    scenario_words: bool = False
    """A scenario's describer may word it (its own data: not found, a domain refusal)."""


MEANINGS: dict[Outcome, Meaning] = {
    "not_found": Meaning(
        effect="none",
        scenario_words=True,
        text={
            "zh": "没有找到相关记录，请核对后再试。",
            "en": "I couldn't find that; please check and try again.",
        },
        short={
            "zh": "没有找到相关记录，请核对后再试。",
            "en": "Nothing was found for that; please check and try again.",
        },
        cues={
            "zh": ("没有找到", "未找到", "没有可订"),
            "en": ("couldn't find", "nothing was found", "no such", "there is no ", "found no "),
        },
    ),
    "invalid": Meaning(
        effect="none",
        text={
            "zh": "抱歉，这个请求的信息不完整或有误：{reason}。没有执行任何操作。",
            "en": "Sorry, some details of that request are missing or wrong: {reason}. "
            "Nothing was done.",
        },
        short={
            "zh": "信息不完整或有误，没有执行任何操作，请补充或更正。",
            "en": "Some details are missing or wrong; nothing was done. Please correct them.",
        },
        cues={"zh": ("不完整或有误",), "en": ("missing or wrong",)},
    ),
    "not_permitted": Meaning(
        effect="none",
        text={
            "zh": "抱歉，您的账号无权{task}，没有执行任何操作。",
            "en": "Sorry, your account isn't allowed to {task}; nothing was done.",
        },
        short={
            "zh": "抱歉，您的账号无权进行这项操作，没有执行任何操作。",
            "en": "Sorry, your account isn't allowed to do that; nothing was done.",
        },
        cues={"zh": ("无权",), "en": ("isn't allowed",)},
    ),
    "refused": Meaning(
        effect="none",
        scenario_words=True,
        text={
            "zh": "抱歉，按当前情况无法{task}，没有执行任何操作。",
            "en": "Sorry, I can't {task} as things stand; nothing was done.",
        },
        short={
            "zh": "按当前情况无法办理，没有执行任何操作。",
            "en": "That can't be done as things stand; nothing was done.",
        },
        cues={"zh": ("按当前情况无法",), "en": ("as things stand",)},
    ),
    "disabled": Meaning(
        effect="none",
        text={
            "zh": "抱歉，暂时无法{task}：这项功能已停用，没有执行任何操作。请稍后再试。",
            "en": "Sorry, I can't {task} right now: the function is switched off, and "
            "nothing was done. Please try again later.",
        },
        short={
            "zh": "这项功能已停用，没有执行任何操作。请稍后再试。",
            "en": "This function is switched off; nothing was done. Please try again later.",
        },
        cues={"zh": ("已停用",), "en": ("switched off",)},
    ),
    "sunset": Meaning(
        effect="none",
        text={
            "zh": "抱歉，无法{task}：这项功能已于 {sunset} 停止服务，没有执行任何操作。",
            "en": "Sorry, I can't {task}: the function was withdrawn on {sunset}, and "
            "nothing was done.",
        },
        short={
            "zh": "这项功能已停止服务，没有执行任何操作。",
            "en": "This function has been withdrawn; nothing was done.",
        },
        cues={"zh": ("停止服务",), "en": ("withdrawn",)},
    ),
    "unavailable": Meaning(
        effect="none",
        text={
            "zh": "抱歉，暂时无法{task}：服务暂时不可用，没有执行任何操作。请稍后再试。",
            "en": "Sorry, I can't {task} right now: the service is unavailable, and "
            "nothing was done. Please try again later.",
        },
        short={
            "zh": "服务暂时不可用，没有执行任何操作，请稍后再试。",
            "en": "The service is unavailable right now; nothing was done. Please try later.",
        },
        cues={"zh": ("暂时不可用",), "en": ("unavailable",)},
    ),
    "timeout": Meaning(
        effect="none",
        text={
            "zh": "抱歉，暂时无法{task}：服务没有及时响应，没有做任何更改。请稍后再试。",
            "en": "Sorry, I can't {task} right now: the service did not answer in time, "
            "and nothing was changed. Please try again later.",
        },
        short={
            "zh": "服务没有及时响应，没有做任何更改，请稍后再试。",
            "en": "The service did not answer in time; nothing was changed. Please try later.",
        },
        cues={"zh": ("没有及时响应",), "en": ("did not answer in time",)},
    ),
    "unknown": Meaning(
        effect="unknown",
        text={
            "zh": "抱歉，{task}的结果暂时无法确认：可能已经办理，也可能没有。请不要重复提交；"
            "稍后可在记录中查看，或凭参考号 {reference} 向人工客服查询。",
            "en": "Sorry, I can't tell yet whether the request to {task} went through: it "
            "may or may not have. Please don't repeat it; check your records later, or ask "
            "an agent with reference {reference}.",
        },
        short={
            "zh": "结果暂时无法确认，可能已经办理，也可能没有；请勿重复提交，稍后查看记录。",
            "en": "We can't tell yet whether it went through; please don't repeat it, and "
            "check your records later.",
        },
        cues={"zh": ("无法确认",), "en": ("can't tell yet",)},
    ),
    "rate_limited": Meaning(
        effect="none",
        text={
            "zh": "操作太频繁了，这次没有执行，请稍后再试。",
            "en": "That's too many requests in a short time; nothing was done this time. "
            "Please try again later.",
        },
        short={
            "zh": "操作太频繁了，这次没有执行，请稍后再试。",
            "en": "Too many requests in a short time; nothing was done. Please try later.",
        },
        cues={"zh": ("太频繁",), "en": ("too many requests",)},
    ),
    "conflict": Meaning(
        effect="none",
        text={
            "zh": "抱歉，无法{task}：情况刚刚有了变化（可能已经办理过），这次没有重复执行。"
            "请核实后再试。",
            "en": "Sorry, I can't {task}: something changed just now (it may already have "
            "been done), so nothing was done again. Please check and try again.",
        },
        short={
            "zh": "情况刚刚有了变化（可能已经办理过），这次没有重复执行。",
            "en": "Something changed just now (it may already have been done); nothing was "
            "done again.",
        },
        cues={"zh": ("有了变化",), "en": ("something changed",)},
    ),
    "pending_review": Meaning(
        effect="held",
        text={
            "zh": "{task}的申请已提交（编号 {reference}），需要人工审核，审核通过后才会生效。",
            "en": "Your request to {task} has been submitted (reference {reference}); it "
            "needs a manual review and takes effect once approved.",
        },
        short={
            "zh": "已提交，需要人工审核，审核通过后才会生效。",
            "en": "Submitted; it needs a manual review and takes effect once approved.",
        },
        cues={"zh": ("人工审核",), "en": ("manual review",)},
    ),
    "compensated": Meaning(
        effect="undone",
        text={
            "zh": "抱歉，{task}没能完成；已经执行的部分已全部撤销，没有留下任何变化。请稍后再试。",
            "en": "Sorry, I couldn't {task}; what had been done was reversed, so nothing "
            "changed. Please try again later.",
        },
        short={
            "zh": "没能完成；已经执行的部分已全部撤销，没有留下任何变化。",
            "en": "It could not be completed; what had been done was reversed.",
        },
        cues={"zh": ("已全部撤销",), "en": ("was reversed",)},
    ),
    "not_requested": Meaning(
        effect="none",
        text={
            "zh": "（{task}这一步您没有要求，没有执行。）",
            "en": "(You did not ask me to {task}, so I did not.)",
        },
        short={
            "zh": "这一步您没有要求，没有执行。",
            "en": "You did not ask for this step; it was not done.",
        },
        cues={"zh": ("您没有要求",), "en": ("did not ask",)},
    ),
    "declined": Meaning(
        effect="none",
        text={
            "zh": "好的，已取消{task}，没有执行任何操作。",
            "en": "OK, I won't {task}; nothing was done.",
        },
        short={
            "zh": "好的，已取消，没有执行任何操作。",
            "en": "OK, I won't do that; nothing was done.",
        },
        cues={"zh": ("好的，已取消",), "en": ("i won't",)},
    ),
    "awaiting": Meaning(
        effect="none",
        text={"zh": "{task}正在等待您的确认。", "en": "Waiting for your confirmation to {task}."},
        short={"zh": "等待您的确认。", "en": "Waiting for your confirmation."},
        cues={"zh": ("等待您的确认",), "en": ("waiting for your confirmation",)},
    ),
}
"""One meaning per class."""

GENERIC_TASK = {"zh": "办理", "en": "do that"}
"""How a sentence names the task when no task is known (the client view)."""

_BY_ERROR_TYPE: dict[str, Outcome] = {
    "not_found": "not_found",
    "validation": "invalid",
    "permission_denied": "not_permitted",
    "user_fixable": "refused",
    "rate_limited": "rate_limited",
    "circuit_open": "unavailable",
    "system": "unavailable",
    "conflict": "conflict",
    "compensated": "compensated",
    "not_requested": "not_requested",
}


def classify(result: Mapping[str, Any]) -> Outcome | None:
    """Return the class of an envelope; ``None`` for a plain success.

    An error type nobody declared is ``unavailable`` (a failure, never "not found").
    """
    status = result.get("status")
    error_type = result.get("error_type")
    data = result.get("data")
    if status == "success":
        if isinstance(data, Mapping) and data.get("status") == PENDING_REVIEW:
            return "pending_review"
        return None
    if status == "pending":
        return "awaiting"
    if status == "unknown":
        return "unknown"
    if status == "rejected" and error_type is None:
        return "declined"
    if status == "timeout":
        return "timeout"
    if error_type == "disabled":
        return "sunset" if isinstance(data, Mapping) and data.get("sunset") else "disabled"
    return _BY_ERROR_TYPE.get(str(error_type), "unavailable")


def effect_of(result: Mapping[str, Any]) -> Effect | Literal["happened"]:
    """Return what happened to the call's side effect: ``happened`` for a success."""
    outcome = classify(result)
    return "happened" if outcome is None else MEANINGS[outcome].effect


def reference(result: Mapping[str, Any], known: Iterable[Any] = ()) -> str:
    """Return the id the user can quote: the record the call created, else the request id.

    The created record is the first ``*_id`` value of the data that is not one the user
    already gave (``known``: the slots), so a refund answers its refund id, not the order's.
    """
    data = result.get("data")
    given = {str(value) for value in known if isinstance(value, str | int)}
    if result.get("status") == "success" and isinstance(data, Mapping):
        for key, value in data.items():
            if str(key).endswith("_id") and isinstance(value, str) and value not in given:
                return value
    return str(result.get("request_id") or "")


def sentence(
    outcome: Outcome,
    result: Mapping[str, Any],
    *,
    language: str,
    task: str | None = None,
    known: Iterable[Any] = (),
) -> str:
    """Say what ``outcome`` means for ``result``, in ``language``, naming ``task``."""
    meaning = MEANINGS[outcome]
    data = result.get("data") if isinstance(result.get("data"), Mapping) else {}
    assert isinstance(data, Mapping)
    fields = [
        str(err.get("field"))
        for err in data.get("errors") or []
        if isinstance(err, Mapping) and err.get("field")
    ]
    template = meaning.text.get(language) or meaning.text["zh"]
    return template.format(
        task=task or GENERIC_TASK.get(language, GENERIC_TASK["zh"]),
        reference=reference(result, known),
        reason=", ".join(fields) or ("参数" if language == "zh" else "arguments"),
        sunset=data.get("sunset") or "",
    )


def short(outcome: Outcome, language: str) -> str:
    """The client view's sentence for ``outcome``."""
    meaning = MEANINGS[outcome]
    return meaning.short.get(language) or meaning.short["zh"]


def said(text: str, language: str | None = None) -> set[Outcome]:
    """Return the classes a reply names, by their cues (both languages unless given)."""
    lowered = text.casefold()
    languages = (language,) if language else ("zh", "en")
    return {
        outcome
        for outcome, meaning in MEANINGS.items()
        if any(cue in lowered for lang in languages for cue in meaning.cues.get(lang, ()))
    }


__all__ = [
    "MEANINGS",
    "PENDING_REVIEW",
    "Effect",
    "Meaning",
    "Outcome",
    "classify",
    "effect_of",
    "reference",
    "said",
    "sentence",
    "short",
]
