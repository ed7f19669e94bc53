"""Intake masking: ID numbers and PINs become the owner's vault tokens, and back for extraction."""

from __future__ import annotations

import pytest

from security.intake import TOKEN, reveal_text, tokenize_payload, tokenize_text
from security.vault import IdentityVault
from storage.db import Database

VALID_ID = "110101199001011237"
X_ID = "11010119900101123X"  # a check character X, typed lower-case below


@pytest.fixture
def vault():
    db = Database(":memory:")
    yield IdentityVault(db, key=b"k" * 32)
    db.close()


@pytest.mark.parametrize(
    "typed",
    [
        VALID_ID,
        "1101 0119 9001 0112 37",
        "110101-19900101-1237",
        "110101\t199001011237",
        "１１０１０１１９９００１０１１２３７",  # full-width digits
        "110101\u200b199001011237",  # a zero-width space inside
    ],
)
def test_an_id_number_in_any_spelling_becomes_the_token_of_its_digits(vault, typed):
    text = tokenize_text(f"乘客张三，身份证号{typed}，谢谢", "u1", vault)
    assert text == f"乘客张三，身份证号{vault.token_for('u1', VALID_ID)}，谢谢"
    assert reveal_text(text, "u1", vault) == f"乘客张三，身份证号{VALID_ID}，谢谢"


def test_a_lower_case_check_character_is_vaulted_upper_case(vault):
    text = tokenize_text(f"id {X_ID.lower()}", "u1", vault)
    assert text == f"id {vault.token_for('u1', X_ID)}"
    assert reveal_text(text, "u1", vault) == f"id {X_ID}"
    token = TOKEN.search(text)
    assert token is not None and vault.masked(token.group(0)) == "110101********123X"


@pytest.mark.parametrize(
    ("typed", "plain"),
    [
        ("密码 123456", "密码 {}"),
        ("帮我转500元给ACC-2001，密码123456", "帮我转500元给ACC-2001，密码{}"),
        ("支付密码：１２３４５６", "支付密码：{}"),
        ("Passcode is 123456", "Passcode is {}"),
        ("123456 is my PIN", "{} is my PIN"),
        ("验证码 8842", "验证码 {}"),
    ],
)
def test_a_secret_after_or_before_its_keyword_becomes_a_token(vault, typed, plain):
    text = tokenize_text(typed, "u1", vault)
    digits = "8842" if "8842" in typed else "123456"
    token = vault.token_for("u1", digits)
    assert text == plain.format(token)
    assert vault.masked(token) == "*" * len(digits)
    assert reveal_text(text, "u1", vault) == plain.format(digits)


@pytest.mark.parametrize(
    "typed",
    [
        "OD-20240618-001 到哪了",
        "帮我转500元给ACC-2001",
        "我的手机 13800138000",  # phones are not what intake hides
        "订 2024-06-20 上海到北京",
        "",
    ],
)
def test_a_message_without_an_id_or_secret_is_untouched(vault, typed):
    assert tokenize_text(typed, "u1", vault) == typed
    assert vault.db.query("SELECT COUNT(*) AS n FROM pii_vault")[0]["n"] == 0


def test_tokenizing_twice_changes_nothing(vault):
    once = tokenize_text(f"密码 123456，身份证 {VALID_ID}", "u1", vault)
    assert tokenize_text(once, "u1", vault) == once
    # a token whose hex happens to be all digits is a token, not a PIN after "密码"
    digits_token = "pii:" + "1" * 24
    assert tokenize_text(f"密码 {digits_token}", "u1", vault) == f"密码 {digits_token}"


def test_tokens_are_per_owner_and_reveal_only_to_their_owner(vault):
    alice = tokenize_text("密码 123456", "alice", vault)
    bob = tokenize_text("密码 123456", "bob", vault)
    assert alice != bob
    assert tokenize_text("密码 123456", "alice", vault) == alice  # deterministic
    assert reveal_text(alice, "bob", vault) == alice  # not his: stays a token
    assert reveal_text("密码 pii:" + "0" * 24, "alice", vault) == "密码 pii:" + "0" * 24


def test_a_run_payload_is_tokenized_in_its_content_fields_in_place(vault):
    payload = {
        "assistant_id": "agent",
        "input": {"messages": [{"role": "user", "content": f"身份证 {VALID_ID}"}]},
        "command": {"resume": "不对，密码是 654321"},
        "metadata": {"note": f"身份证 {VALID_ID}"},  # not content: a server's own field
    }
    messages = payload["input"]
    assert tokenize_payload(payload, "u1", vault) is True
    assert payload["input"] is not messages  # replaced on the dict the server holds
    content = payload["input"]["messages"][0]["content"]
    assert content == f"身份证 {vault.token_for('u1', VALID_ID)}"
    assert payload["command"] == {"resume": f"不对，密码是 {vault.token_for('u1', '654321')}"}
    assert payload["metadata"] == {"note": f"身份证 {VALID_ID}"}
    assert tokenize_payload(payload, "u1", vault) is False


def test_multimodal_content_and_batches_are_walked(vault):
    batch = [
        {
            "input": {
                "messages": [{"type": "human", "content": [{"type": "text", "text": "密码123456"}]}]
            }
        },
        {"input": {"messages": [{"role": "user", "content": "hello"}]}},
    ]
    assert tokenize_payload(batch, "u1", vault) is True
    part = batch[0]["input"]["messages"][0]["content"][0]
    assert part == {"type": "text", "text": f"密码{vault.token_for('u1', '123456')}"}
    assert batch[1]["input"]["messages"][0]["content"] == "hello"
