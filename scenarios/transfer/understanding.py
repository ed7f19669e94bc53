"""How a transfer is recognized: the payee account, the amount in cents and the PIN."""

from __future__ import annotations

import re
from datetime import date

import cn2an

from contract.scenario import Beyond, SlotResult
from security.pii import bare_code, find_pin
from security.pii import normalize as normalize_digits
from state import SlotValues
from understanding.values import NUMBER_WORDS, words_value

_ACCOUNT = re.compile(r"(?<![A-Za-z0-9])ACC-\d{4}(?!\d)", re.IGNORECASE)
_AMOUNT = re.compile(
    r"(?:¥|￥|rmb\s*|cny\s*)?(\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d{1,9}(?:\.\d{1,2})?)"
    r"\s*(?:元|块|yuan|rmb|cny)"
    r"|(?:¥|￥)\s*(\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d{1,9}(?:\.\d{1,2})?)",
    re.IGNORECASE,
)
"""An amount with its currency; thousands may be grouped with commas ("1,000元")."""
_BARE_AMOUNT = re.compile(
    r"(?:transfer|send|wire|pay|转账?|汇款?|打)\s*(\d{1,9}(?:\.\d{1,2})?)\s*(?:to\s|给|到)",
    re.IGNORECASE,
)
"""A number with no currency, between a transfer verb and its payee ("transfer 300 to
ACC-2001", "转300给ACC-2001"): the amount. The confirmation shows it before anything moves."""
_VERB_THEN_NUMBER = re.compile(
    r"(?:转账?|汇款?|打)\s*(\d{1,9}(?:\.\d{1,2})?)\s*(?=$|[，,。.!！?？~\s]|吧|过去)"
)
"""A transfer verb and a number ending the clause ("给李四转100，ACC-2001"): the amount."""
_NUMERALS = "零〇一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟"
_PAYEE_THEN_AMOUNT = re.compile(
    rf"ACC-\d{{4}}\s*(?:转账?|汇款?|打)\s*(\d{{1,9}}(?:\.\d{{1,2}})?|[{_NUMERALS}]+)"
    r"\s*(?=$|[，,。.!！?？~])",
    re.IGNORECASE,
)
"""The payee, a transfer verb, then a number ending the sentence ("给ACC-2001转五百",
"给ACC-2001转500"): the amount, with no currency said. The confirmation shows it."""
_CHINESE_AMOUNT = re.compile(
    rf"([{_NUMERALS}]+(?:点[零〇一二三四五六七八九]+)?)"
    r"\s*(?:元|块)(?![零〇一二两三四五六七八九\d])"
)
"""An amount in Chinese numerals ("一百块钱", "两千五百元"). "三块五" (3.50) is left alone:
the part after 块 is not read, so the amount is asked for rather than guessed."""

_NUMBER_WORD = "|".join(NUMBER_WORDS)
_WORD_AMOUNT = re.compile(
    rf"\b((?:(?:{_NUMBER_WORD})(?:[\s-]+(?:and[\s-]+)?|(?=\s*(?:yuan|rmb|cny|bucks|kuai)\b)))+)"
    r"\s*(?:yuan|rmb|cny|bucks|kuai)\b",
    re.IGNORECASE,
)
"""An amount in English words ("two hundred yuan", "fifty-five bucks")."""


_BARE_ANSWER = re.compile(
    rf"\s*(\d{{1,9}}(?:\.\d{{1,2}})?|[{_NUMERALS}]+)\s*[。.!！]?\s*",
)
"""A message that is only a number: the answer to the question for the amount or the PIN."""


def _bare_answer(text: str) -> SlotResult:
    """Read a message that is only a number: six digits the PIN or the amount, else the amount.

    The question lists both ("转账金额、6 位支付密码"). Six digits are read as the PIN unless
    the PIN is already known, and then as the amount ("100000" answering "转多少？"; slot
    filling picks, ``SlotResult.either``). The amount is confirmed before anything moves, and
    a wrong PIN is refused by the verification, so neither reading is a guess that acts.
    """
    bare = _BARE_ANSWER.fullmatch(normalize_digits(text))
    cents = _numeral_cents(bare.group(1)) if bare is not None else None
    amount = {} if cents is None else {"amount_cents": cents}
    code = bare_code(text)  # six digits alone: what intake vaulted as a secret
    if code is not None:
        return SlotResult(either=({"pin": code}, amount) if amount else ({"pin": code},))
    return SlotResult(slots=amount)


def _amount_cents(text: str) -> int | None:
    """Return the amount of money ``text`` states, in cents, or ``None``."""
    if amount := _AMOUNT.search(text):
        return round(float((amount.group(1) or amount.group(2)).replace(",", "")) * 100)
    if bare := _BARE_AMOUNT.search(text) or _VERB_THEN_NUMBER.search(text):
        return round(float(bare.group(1)) * 100)
    if chinese := _CHINESE_AMOUNT.search(text):
        return _numeral_cents(chinese.group(1))
    if words := _WORD_AMOUNT.search(text):
        value = words_value(words.group(1))
        return value * 100 if value is not None else None
    if after_payee := _PAYEE_THEN_AMOUNT.search(text):
        return _numeral_cents(after_payee.group(1))
    return None


def _numeral_cents(numeral: str) -> int | None:
    """Return a number in digits or Chinese numerals in cents; ``None`` unless above zero."""
    try:
        value = cn2an.cn2an(numeral, "smart")
    except ValueError:  # not a well-formed numeral ("百百"): ask rather than guess
        return None
    return round(float(value) * 100) if value > 0 else None


def extract(text: str, intent: str, *, today: date) -> SlotResult:
    """Find the payee account, the amount (to cents) and the payment PIN."""
    slots: SlotValues = {}
    invalid: dict[str, str] = {}
    accounts = list(dict.fromkeys(m.group(0).upper() for m in _ACCOUNT.finditer(text)))
    if len(accounts) == 1:
        slots["to_account"] = accounts[0]
    elif len(accounts) > 1:
        invalid["to_account"] = "multiple: " + ", ".join(accounts)
    amount_cents = _amount_cents(text)
    if amount_cents is not None:
        slots["amount_cents"] = amount_cents
    pin = find_pin(text)  # the one PII detector: every spelling masking knows
    if pin:
        slots["pin"] = pin
    if not slots and not invalid:
        return _bare_answer(text)
    return SlotResult(slots=slots, invalid=invalid)


BEYOND = (Beyond("transfer_reversal"), Beyond("charge_dispute"))
"""Taking back a transfer already made, or a charge disputed ("转账被扣了两次", "I was charged
twice"): only a person may do that, after checking."""
