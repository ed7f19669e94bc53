"""The task stack, not the model, says whether a task command starts, fills or corrects."""

from __future__ import annotations

from understanding.commands import Reading, SetSlot, Start
from understanding.reconcile import Placed, Proposal, place, role_of, split_values, unheard_dropped
from understanding.view import DialogueView, TaskView

IDLE = DialogueView()
NO_RULES = Reading((), "zh")


def placed(proposals, view=IDLE, rules=NO_RULES, sensitive=None):
    return [
        (p.kind, p.intent, dict(p.values), p.follows_up)
        for p in place(proposals, view, rules, sensitive=sensitive or {})
    ]


def test_a_slot_named_twice_is_two_entities_and_a_slot_named_once_is_shared():
    assert split_values([("city", "北京"), ("city", "上海"), ("date", "明天")]) == [
        [("city", "北京"), ("date", "明天")],
        [("city", "上海"), ("date", "明天")],
    ]
    assert split_values([("city", "北京")]) == [[("city", "北京")]]
    assert split_values([]) == [[]]


def test_a_set_or_correct_with_nothing_waiting_starts_the_task():
    out = placed(
        [
            Proposal(0, "set", "URGE_DELIVERY", {"order_id": "202506001"}),
            Proposal(1, "correct", "TRANSFER_MONEY", {"to_account": "ACC-2001"}),
        ]
    )
    assert out == [
        ("start", "URGE_DELIVERY", {"order_id": "202506001"}, False),
        ("start", "TRANSFER_MONEY", {"to_account": "ACC-2001"}, False),
    ]


def test_the_waiting_task_is_filled_and_a_changed_value_is_a_correction():
    view = DialogueView(waiting=TaskView("BOOK_FLIGHT", {"origin": "上海"}, ("destination",)))
    out = placed(
        [Proposal(0, "start", "BOOK_FLIGHT", {"origin": "杭州", "destination": "北京"})], view
    )
    assert out == [
        ("set", "BOOK_FLIGHT", {"destination": "北京"}, False),
        ("correct", "BOOK_FLIGHT", {"origin": "杭州"}, False),
    ]


def test_the_pending_task_is_corrected_whatever_kind_the_model_said():
    view = DialogueView(pending=TaskView("TRANSFER_MONEY", {"amount_cents": 50000}))
    out = placed([Proposal(0, "set", "TRANSFER_MONEY", {"amount_cents": 5000})], view)
    assert out == [("correct", "TRANSFER_MONEY", {"amount_cents": 5000}, False)]


def test_contradictory_values_for_the_waiting_task_follow_the_rules_and_feed_other_tasks():
    # "OD-…002，另外帮我催一下 OD-…001" answering "which order?", as the local model read it
    view = DialogueView(waiting=TaskView("REQUEST_REFUND", {}, ("order_id",)))
    rules = Reading(
        (
            SetSlot(intent="REQUEST_REFUND", slots={"order_id": "OD-20240618-002"}),
            Start(intent="URGE_DELIVERY", slots={"order_id": "OD-20240618-001"}),
        ),
        "zh",
    )
    out = placed(
        [
            Proposal(0, "set", "REQUEST_REFUND", {"order_id": "OD-20240618-001"}),
            Proposal(1, "correct", "REQUEST_REFUND", {"order_id": "OD-20240618-002"}),
            Proposal(2, "correct", "URGE_DELIVERY", {"order_id": "OD-20240618-001"}),
        ],
        view,
        rules,
    )
    assert out == [
        ("set", "REQUEST_REFUND", {"order_id": "OD-20240618-002"}, False),
        ("start", "URGE_DELIVERY", {"order_id": "OD-20240618-001"}, False),
    ]


def test_two_values_answering_which_one_fill_the_first_and_start_the_same_task_again():
    view = DialogueView(waiting=TaskView("CHECK_ORDER_STATUS", {}, ("order_id",)))
    out = placed(
        [
            Proposal(0, "set", "CHECK_ORDER_STATUS", {"order_id": "A"}),
            Proposal(0, "set", "CHECK_ORDER_STATUS", {"order_id": "B"}),
        ],
        view,
    )
    assert out == [
        ("set", "CHECK_ORDER_STATUS", {"order_id": "A"}, False),
        ("start", "CHECK_ORDER_STATUS", {"order_id": "B"}, False),
    ]


def test_a_correction_of_the_request_answered_last_asks_it_again_keeping_its_other_slots():
    view = DialogueView(last=TaskView("QUERY_WEATHER", {"city": "北京", "date": "2024-06-19"}))
    out = placed([Proposal(0, "correct", "QUERY_WEATHER", {"city": "上海"})], view)
    assert out == [("start", "QUERY_WEATHER", {"city": "上海", "date": "2024-06-19"}, True)]
    assert role_of(view, "QUERY_WEATHER") == "last"


def test_a_secret_of_the_last_request_is_not_carried_into_its_follow_up():
    view = DialogueView(last=TaskView("TRANSFER_MONEY", {"pin": "tok", "to_account": "ACC-1"}))
    out = placed(
        [Proposal(0, "correct", "TRANSFER_MONEY", {"amount_cents": 100})],
        view,
        sensitive={"TRANSFER_MONEY": frozenset({"pin"})},
    )
    assert out == [("start", "TRANSFER_MONEY", {"to_account": "ACC-1", "amount_cents": 100}, True)]


def test_an_entity_the_rules_heard_and_the_model_skipped_is_kept():
    rules = Reading(
        (
            Start(intent="URGE_DELIVERY", slots={"order_id": "OD-20240618-001"}),
            Start(intent="URGE_DELIVERY", slots={"order_id": "202506001"}),
            Start(intent="QUERY_WEATHER", slots={"city": "北京"}),
        ),
        "zh",
    )
    out = placed([Proposal(0, "set", "URGE_DELIVERY", {"order_id": "202506001"})], rules=rules)
    # the weather the model did not start stays out: the model may have judged that cue wrong
    assert out == [
        ("start", "URGE_DELIVERY", {"order_id": "202506001"}, False),
        ("start", "URGE_DELIVERY", {"order_id": "OD-20240618-001"}, False),
    ]


def test_a_start_keeps_what_the_rules_heard_and_the_model_left_out():
    rules = Reading((Start(intent="QUERY_WEATHER", slots={"city": "北京", "date": "明天"}),), "zh")
    out = placed([Proposal(0, "start", "QUERY_WEATHER", {"city": "北京"})], rules=rules)
    assert out == [("start", "QUERY_WEATHER", {"city": "北京", "date": "明天"}, False)]


def test_one_request_said_twice_by_the_model_is_one_task_with_all_it_gave():
    # measured on the local model: the date only in the second of two starts of one booking
    first = {"origin": "Shanghai", "destination": "Beijing", "passenger_name": "Zhang San"}
    second = {"origin": "shanghai", "destination": "beijing", "departure_date": "2024-06-21"}
    out = placed(
        [Proposal(0, "start", "BOOK_FLIGHT", first), Proposal(1, "start", "BOOK_FLIGHT", second)]
    )
    assert out == [
        ("start", "BOOK_FLIGHT", {**first, "departure_date": "2024-06-21"}, False),
    ]


def test_starts_that_disagree_on_a_slot_stay_two_tasks():
    out = placed(
        [
            Proposal(0, "start", "QUERY_WEATHER", {"city": "北京"}),
            Proposal(1, "start", "QUERY_WEATHER", {"city": "上海", "date": "2024-06-19"}),
        ]
    )
    assert [values["city"] for _, _, values, _ in out] == ["北京", "上海"]


def test_the_rules_start_joins_the_models_whatever_the_letter_case_and_fixes_its_refusal():
    # measured: the model wrote the year wrong (refused) and "Shanghai" where the rules
    # heard "shanghai"; the rules' start was added as a second booking without its date
    model = Proposal(
        0,
        "start",
        "BOOK_FLIGHT",
        {"origin": "Shanghai", "destination": "Beijing"},
        refused={"departure_date": "2023-06-21"},
    )
    rules = Reading(
        (
            Start(
                intent="BOOK_FLIGHT",
                slots={"origin": "shanghai", "departure_date": "2024-06-21"},
                confidence=0.9,
            ),
        ),
        "en",
    )
    out = place([model], IDLE, rules, sensitive={})
    assert [(p.kind, dict(p.values), dict(p.refused)) for p in out] == [
        (
            "start",
            {"origin": "Shanghai", "destination": "Beijing", "departure_date": "2024-06-21"},
            {},
        )
    ]


def test_a_fill_keeps_what_the_rules_heard_and_the_model_left_out():
    # measured in mixed mode: "from Shanghai on the 20th" answering the booking's questions
    view = DialogueView(
        waiting=TaskView("BOOK_FLIGHT", {"destination": "Beijing"}, ("origin", "departure_date"))
    )
    model = Proposal(
        0, "set", "BOOK_FLIGHT", {"origin": "Shanghai"}, refused={"departure_date": "2023-06-20"}
    )
    rules = Reading(
        (SetSlot(intent="BOOK_FLIGHT", slots={"departure_date": "2024-06-20"}, confidence=0.5),),
        "en",
    )
    out = place([model], view, rules, sensitive={})
    assert [(p.kind, dict(p.values), dict(p.refused)) for p in out] == [
        ("set", {"origin": "Shanghai", "departure_date": "2024-06-20"}, {})
    ]


def test_a_task_nothing_names_beside_another_is_dropped():
    # measured on the local model: the weather asked for, and an order check with no order
    rules = Reading((Start(intent="QUERY_WEATHER", slots={"city": "北京"}, confidence=0.9),), "zh")
    both = [
        Placed(0, "start", "QUERY_WEATHER", {"city": "北京"}),
        Placed(1, "start", "CHECK_ORDER_STATUS", {}),
    ]
    assert [p.intent for p in unheard_dropped(both, rules)] == ["QUERY_WEATHER"]
    named = [*both[:1], Placed(1, "start", "CHECK_ORDER_STATUS", {"order_id": "OD-1"})]
    assert len(unheard_dropped(named, rules)) == 2  # it gave a value: the message named it
    alone = both[1:]
    assert unheard_dropped(alone, rules) == alone  # alone, it stays the model's reading


def test_a_new_task_given_only_what_the_waiting_one_asked_for_is_its_answer():
    # a model read "OD-…", answering a refund's "which order?", as an order check
    view = DialogueView(waiting=TaskView("REQUEST_REFUND", {}, ("order_id",)))
    rules = Reading((SetSlot(intent="REQUEST_REFUND", slots={"order_id": "OD-2"}),), "zh")
    model = Proposal(0, "start", "CHECK_ORDER_STATUS", {"order_id": "OD-2"})
    assert placed([model], view, rules) == [("set", "REQUEST_REFUND", {"order_id": "OD-2"}, False)]
    # named by the rules too ("OD-2 到哪了"), it is a request of its own
    asked = Reading((Start(intent="CHECK_ORDER_STATUS", slots={"order_id": "OD-2"}),), "zh")
    assert placed([model], view, asked)[0][:2] == ("start", "CHECK_ORDER_STATUS")
