from planning.prompt_budget import (
    TaskSummary,
    bounded_messages,
    cut_summary,
    estimate_messages,
    estimate_tokens,
)


def test_estimate_counts_cjk_per_character_and_latin_per_four():
    assert estimate_tokens("") == 0
    assert estimate_tokens("我的订单") == 4
    assert estimate_tokens("abcdefgh") == 2
    assert estimate_tokens("订单 OD-1") == 2 + 2  # two Hanzi, " OD-1" is 5 characters


def test_tool_results_are_cut_to_their_summary():
    envelope = {
        "tool": "query_order_status",
        "status": "success",
        "summary": "order OD-20240618-001: delivering, eta 15",
        "data": {"rows": ["x" * 5000]},
    }
    text = cut_summary(envelope)
    assert text == "query_order_status success: order OD-20240618-001: delivering, eta 15"
    assert len(cut_summary({"summary": "y" * 1000})) == 160


def _conversation(turns):
    out = []
    for i in range(turns):
        out.append(
            ("user", f"第{i}轮：我的订单 OD-20240618-001 怎么还没到？能不能快一点送过来" * 2)
        )
        out.append(("assistant", f"turn {i}: your order is on its way, expected in 15 minutes."))
    return out


def test_fifty_turn_conversation_stays_within_the_budget():
    summary = TaskSummary(
        goal="URGE_DELIVERY",
        done=("query_order_status: delivering",),
        pending=("urge_delivery",),
        slots={"order_id": "OD-20240618-001"},
    )
    results = [{"tool": "query_order_status", "status": "success", "summary": "s" * 400}] * 5
    sizes = []
    for turns in (1, 10, 50):
        messages = bounded_messages(
            "You help with orders.",
            _conversation(turns),
            summary=summary,
            tool_results=results,
            budget=600,
        )
        sizes.append(estimate_messages(messages))
        assert estimate_messages(messages) <= 600
        assert "Task: URGE_DELIVERY" in messages[0][1]
        assert "Pending: urge_delivery" in messages[0][1]
        assert messages[-1][1].startswith(f"turn {turns - 1}:")  # the newest turn is kept
    assert sizes[2] <= 600 and sizes[2] >= sizes[0]
    long_one = bounded_messages("sys", _conversation(50), budget=600)
    assert any("earlier turns omitted" in content for _, content in long_one)


def test_a_single_huge_turn_is_cut_to_fit():
    messages = bounded_messages("sys", [("user", "很长" * 5000)], budget=200, max_turn_chars=10**6)
    assert estimate_messages(messages) <= 200
    assert messages[-1][1].endswith("…")
