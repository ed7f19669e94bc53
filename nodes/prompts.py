"""Every user-facing sentence and model prompt, in one place, filled in at call time.

Keys are ``(name, language)``. Replies are built from tool data with these templates, so
the user never sees raw JSON or an internal error.
"""

from __future__ import annotations

from typing import Any

INTENT_LABELS = {
    ("CHECK_ORDER_STATUS", "zh"): "查询订单状态",
    ("CHECK_ORDER_STATUS", "en"): "check an order's status",
    ("REQUEST_REFUND", "zh"): "申请退款",
    ("REQUEST_REFUND", "en"): "request a refund",
    ("URGE_DELIVERY", "zh"): "催单",
    ("URGE_DELIVERY", "en"): "hurry a delivery",
    ("QUERY_WEATHER", "zh"): "查询天气",
    ("QUERY_WEATHER", "en"): "check the weather",
    ("BOOK_FLIGHT", "zh"): "预订机票",
    ("BOOK_FLIGHT", "en"): "book a flight",
    ("TRANSFER_MONEY", "zh"): "转账",
    ("TRANSFER_MONEY", "en"): "make a transfer",
    ("BOOK_APPOINTMENT", "zh"): "预约挂号",
    ("BOOK_APPOINTMENT", "en"): "book a medical appointment",
    ("QUERY_SALES", "zh"): "查询销售数据",
    ("QUERY_SALES", "en"): "look up sales figures",
}

STATUS_LABELS = {
    ("delivering", "zh"): "配送中",
    ("delivering", "en"): "out for delivery",
    ("delivered", "zh"): "已送达",
    ("delivered", "en"): "delivered",
    ("shipped", "zh"): "已发货",
    ("shipped", "en"): "shipped",
    ("pending_payment", "zh"): "待付款",
    ("pending_payment", "en"): "awaiting payment",
    ("cancelled", "zh"): "已取消",
    ("cancelled", "en"): "cancelled",
}

TEMPLATES: dict[tuple[str, str], str] = {
    # clarification
    ("ask_intent", "zh"): "抱歉，我没太明白您的意思。请问您是要查询订单状态、申请退款还是催单？",
    ("ask_intent", "en"): (
        "Sorry, I'm not sure what you need. Would you like to check an order's status, "
        "request a refund, or hurry a delivery?"
    ),
    ("ask_between", "zh"): "请问您是想{first}，还是想{second}？",
    ("ask_between", "en"): "Would you like to {first}, or to {second}?",
    (
        "ask_order_id",
        "zh",
    ): "好的，我来帮您{task}。请提供您的订单号（格式：OD-YYYYMMDD-XXX，或 9–12 位数字）。",
    ("ask_order_id", "en"): (
        "Sure, I can help you {task}. Please give me your order number "
        "(OD-YYYYMMDD-XXX, or 9–12 digits)."
    ),
    (
        "invalid_order_id",
        "zh",
    ): "“{value}”不是有效的订单号。请提供订单号（格式：OD-YYYYMMDD-XXX，或 9–12 位数字）。",
    ("invalid_order_id", "en"): (
        "“{value}” is not a valid order number. Please give me the order number "
        "(OD-YYYYMMDD-XXX, or 9–12 digits)."
    ),
    ("multiple_order_ids", "zh"): "您提到了多个订单号（{value}），请问是哪一个？",
    ("multiple_order_ids", "en"): "You mentioned several order numbers ({value}). Which one?",
    ("ask_slots", "zh"): "好的，我来帮您{task}。还需要：{slots}。",
    ("ask_slots", "en"): "Sure, I can help you {task}. I still need: {slots}.",
    ("invalid_passenger_id", "zh"): "身份证号 {value} {reason}，请核对后重新提供。",
    (
        "invalid_passenger_id",
        "en",
    ): "The ID number {value} is not valid ({reason}); please check it.",
    ("slot_to_account", "zh"): "收款账户（ACC-NNNN）",
    ("slot_to_account", "en"): "payee account (ACC-NNNN)",
    ("slot_amount_cents", "zh"): "转账金额",
    ("slot_amount_cents", "en"): "amount",
    ("slot_pin", "zh"): "6 位支付密码",
    ("slot_pin", "en"): "6-digit payment PIN",
    ("transfer_done", "zh"): "已向{payee}（{to_account}）转账 {amount} 元，交易号 {transfer_id}。",
    ("transfer_done", "en"): "Sent ¥{amount} to {payee} ({to_account}); transaction {transfer_id}.",
    (
        "transfer_review",
        "zh",
    ): "这笔 {amount} 元的转账需要风控审核，已提交，预计 2 小时内完成（交易号 {transfer_id}）。",
    ("transfer_review", "en"): (
        "This ¥{amount} transfer needs a risk review; it has been submitted and should complete "
        "within 2 hours (transaction {transfer_id})."
    ),
    ("transfer_wrong_pin", "zh"): "支付密码不正确，转账已停止，没有扣款。",
    (
        "transfer_wrong_pin",
        "en",
    ): "The payment PIN is wrong; the transfer was stopped and nothing was taken.",
    ("transfer_insufficient", "zh"): "余额不足（可用 {balance} 元），转账已停止，没有扣款。",
    ("transfer_insufficient", "en"): (
        "Insufficient balance (¥{balance} available); the transfer was stopped and nothing "
        "was taken."
    ),
    ("transfer_no_payee", "zh"): "收款账户 {to_account} 不存在，转账已停止，没有扣款。",
    ("transfer_no_payee", "en"): (
        "Payee account {to_account} does not exist; the transfer was stopped and nothing was taken."
    ),
    ("transfer_reversed", "zh"): "转账未能完成清算，款项已原路退回您的账户，请稍后再试。",
    ("transfer_reversed", "en"): (
        "The transfer could not be cleared, so the money was returned to your account. "
        "Please try again later."
    ),
    ("transfer_failed", "zh"): "转账暂时无法完成，没有扣款，请稍后再试。",
    ("transfer_failed", "en"): "The transfer can't be completed right now; nothing was taken.",
    ("slot_department", "zh"): "科室（内科、儿科、皮肤科）",
    ("slot_department", "en"): "department (internal medicine, pediatrics, dermatology)",
    ("slot_day", "zh"): "就诊日期",
    ("slot_day", "en"): "day",
    (
        "confirm_appointment",
        "zh",
    ): "为{patient}预约 {day} {time} {department}{doctor}的号，确认吗？回复“确认”或“取消”。",
    ("confirm_appointment", "en"): (
        "Book {department} with {doctor} on {day} at {time} for {patient}? Reply yes or no."
    ),
    (
        "appointment_notice",
        "zh",
    ): "您已预约 {slot_date} {slot_time} {department}{doctor}，预约号 {appointment_id}。",
    ("appointment_notice", "en"): (
        "Your appointment: {department}, {doctor}, {slot_date} {slot_time} ({appointment_id})."
    ),
    (
        "appointment_booked",
        "zh",
    ): "预约成功：{slot_date} {slot_time} {department}{doctor}，预约号 {appointment_id}。{notice}",
    ("appointment_booked", "en"): (
        "Booked: {department} with {doctor} on {slot_date} at {slot_time} ({appointment_id}). "
        "{notice}"
    ),
    ("appointment_notified", "zh"): "已短信通知您。",
    ("appointment_notified", "en"): "A text message is on its way.",
    ("appointment_not_notified", "zh"): "（通知短信暂时没有发出，预约不受影响，请记下预约号。）",
    ("appointment_not_notified", "en"): (
        "(The text message could not be sent; the booking stands. Please note the number.)"
    ),
    ("appointment_taken", "zh"): "抱歉，这个号刚被其他人约走了，请换个时间再试。",
    ("appointment_taken", "en"): "Sorry, that slot was just taken. Please try another time.",
    ("appointment_none", "zh"): "{day} {department}没有可预约的号了，要换一天吗？",
    ("appointment_none", "en"): "There are no free {department} slots on {day}. Another day?",
    ("appointment_no_department", "zh"): "没有找到“{department}”这个科室。",
    ("appointment_no_department", "en"): "There is no department called {department}.",
    ("appointment_failed", "zh"): "抱歉，预约没有成功，号源已释放，请稍后再试。",
    (
        "appointment_failed",
        "en",
    ): "Sorry, the booking failed; the slot was released. Please try later.",
    ("slot_origin", "zh"): "出发城市",
    ("slot_origin", "en"): "departure city",
    ("slot_destination", "zh"): "到达城市",
    ("slot_destination", "en"): "destination",
    ("slot_departure_date", "zh"): "出发日期",
    ("slot_departure_date", "en"): "travel date",
    ("slot_passenger_name", "zh"): "乘客姓名",
    ("slot_passenger_name", "en"): "passenger's name",
    ("slot_passenger_id", "zh"): "乘客身份证号",
    ("slot_passenger_id", "en"): "passenger's ID number",
    ("flight_booked", "zh"): (
        "已为{passenger_name}（身份证 {passenger_id}）预订 {departure_date} "
        "{origin}→{destination} 的 {flight_no} 航班，{depart_time} 起飞，{arrive_time} 到达，"
        "订单号 {booking_id}，票价 {price} 元。"
    ),
    ("flight_booked", "en"): (
        "Booked {flight_no} from {origin} to {destination} on {departure_date} for "
        "{passenger_name} (ID {passenger_id}): departs {depart_time}, arrives {arrive_time}. "
        "Booking {booking_id}, fare ¥{price}."
    ),
    (
        "flight_unavailable",
        "zh",
    ): "{departure_date} {origin}→{destination} 没有可订的航班（{reason}）。要换个日期吗？",
    ("flight_unavailable", "en"): (
        "There is no seat from {origin} to {destination} on {departure_date} ({reason}). "
        "Another date?"
    ),
    ("ask_city", "zh"): "好的，我来帮您{task}。请问是哪个城市？",
    ("ask_city", "en"): "Sure, I can help you {task}. Which city?",
    # weather
    ("weather_now", "zh"): "{city}现在{condition}，气温 {temp_c:g}°C{humidity}。",
    ("weather_now", "en"): "It's {condition} in {city} right now, {temp_c:g}°C{humidity}.",
    ("humidity", "zh"): "，湿度 {value}%",
    ("humidity", "en"): ", humidity {value}%",
    ("city_not_found", "zh"): "未找到该城市：{city}。请确认城市名称是否正确。",
    ("city_not_found", "en"): "I couldn't find a city called {city}. Please check the name.",
    (
        "weather_unavailable",
        "zh",
    ): "抱歉，暂时无法获取{city}的天气（天气服务没有及时响应），请稍后再试。",
    ("weather_unavailable", "en"): (
        "Sorry, I can't get the weather for {city} right now (the weather service did not "
        "answer in time). Please try again later."
    ),
    (
        "weather_format_changed",
        "zh",
    ): "抱歉，天气服务返回的数据格式有变，暂时无法提供{city}的天气；问题已记录。",
    ("weather_format_changed", "en"): (
        "Sorry, the weather service changed its data format, so I can't give the weather "
        "for {city} right now; the problem has been logged."
    ),
    # sales reports
    ("sales_top", "zh"): "{month}{metric}最高的产品是「{product}」，{metric} {value}。",
    (
        "sales_top",
        "en",
    ): "In {month}, the product with the highest {metric} was {product} ({value}).",
    ("sales_bottom", "zh"): "{month}{metric}最低的产品是「{product}」，{metric} {value}。",
    (
        "sales_bottom",
        "en",
    ): "In {month}, the product with the lowest {metric} was {product} ({value}).",
    ("sales_ranking", "zh"): "{month}{metric}排名：{ranking}。",
    ("sales_ranking", "en"): "{month} by {metric}: {ranking}.",
    ("sales_total", "zh"): "{month}总{metric}为 {value}。",
    ("sales_total", "en"): "Total {metric} in {month}: {value}.",
    ("sales_no_data", "zh"): "{month}没有销售数据。",
    ("sales_no_data", "en"): "There are no sales figures for {month}.",
    ("sales_unsupported", "zh"): (
        "抱歉，我目前能回答按月的销售额或销量最高、最低的产品，以及月度总额，"
        "例如“上月销售额最高的产品”。"
    ),
    ("sales_unsupported", "en"): (
        "Sorry, I can answer which product sold most or least, and monthly totals, by revenue "
        "or units, e.g. “last month's best-selling product”."
    ),
    ("metric_amount", "zh"): "销售额",
    ("metric_amount", "en"): "revenue",
    ("metric_quantity", "zh"): "销量",
    ("metric_quantity", "en"): "units sold",
    ("yuan", "zh"): "{value:,.2f} 元",
    ("yuan", "en"): "¥{value:,.2f}",
    ("units", "zh"): "{value} 件",
    ("units", "en"): "{value} units",
    # order status
    (
        "status_delivering",
        "zh",
    ): "您的订单 {order_id}（{item}）正在配送中，预计 {eta_minutes} 分钟送达，请耐心等待。",
    ("status_delivering", "en"): (
        "Your order {order_id} ({item}) is out for delivery and should arrive in about "
        "{eta_minutes} minutes."
    ),
    ("status_shipped", "zh"): "您的订单 {order_id}（{item}）已发货，预计 {eta_date} 送达。",
    ("status_shipped", "en"): "Your order {order_id} ({item}) has shipped; expected on {eta_date}.",
    (
        "status_delivered",
        "zh",
    ): "您的订单 {order_id}（{item}）已送达。如未收到，请联系骑手或告诉我，我帮您处理。",
    ("status_delivered", "en"): (
        "Your order {order_id} ({item}) has been delivered. If you did not receive it, "
        "tell me and I'll help."
    ),
    ("status_other", "zh"): "您的订单 {order_id}（{item}）当前状态：{status}。",
    ("status_other", "en"): "Your order {order_id} ({item}) is {status}.",
    # refund
    ("refund_submitted", "zh"): (
        "已为订单 {order_id} 提交退款申请（退款单号 {refund_id}，金额 {amount} 元），"
        "审核通过后原路退回。"
    ),
    ("refund_submitted", "en"): (
        "I've filed a refund request for order {order_id} (refund {refund_id}, {amount} yuan). "
        "It goes back to your original payment method once approved."
    ),
    ("refund_exists", "zh"): (
        "订单 {order_id} 已有退款申请（退款单号 {refund_id}，状态：{refund_status}），"
        "无需重复提交。"
    ),
    ("refund_exists", "en"): (
        "Order {order_id} already has a refund request (refund {refund_id}, {refund_status}); "
        "no need to file another."
    ),
    # urge
    (
        "urged_minutes",
        "zh",
    ): "已帮您催促骑手加快配送订单 {order_id}，预计 {eta_minutes} 分钟内送达。",
    ("urged_minutes", "en"): (
        "I've asked the rider to hurry with order {order_id}; it should arrive within "
        "{eta_minutes} minutes."
    ),
    ("urged_date", "zh"): "已帮您催促物流加快配送订单 {order_id}，预计 {eta_date} 送达。",
    (
        "urged_date",
        "en",
    ): "I've asked the carrier to hurry order {order_id}; expected on {eta_date}.",
    # confirmation of high-risk actions
    ("confirm_action", "zh"): "即将执行：{tool}（{arguments}）",
    ("confirm_action", "en"): "About to run: {tool} ({arguments})",
    ("confirm_question", "zh"): "请确认是否继续？回复“确认”继续，回复“取消”放弃。",
    ("confirm_question", "en"): "Shall I go ahead? Reply “yes” to confirm or “no” to cancel.",
    ("declined", "zh"): "好的，已取消{task}，没有执行任何操作。",
    ("declined", "en"): "OK, I won't {task}; nothing was done.",
    ("rate_limited", "zh"): "操作太频繁了，请稍后再试。",
    ("rate_limited", "en"): "That's too many requests in a short time; please try again later.",
    ("large_refund_approved", "zh"): (
        "订单 {order_id} 的退款金额较大（{amount} 元），已转交财务处理：已批准，"
        "退款单号 {refund_id}，将原路退回。"
    ),
    ("large_refund_approved", "en"): (
        "The refund for order {order_id} ({amount} yuan) is above my limit, so finance handled "
        "it: approved, refund {refund_id}."
    ),
    ("large_refund_review", "zh"): (
        "订单 {order_id} 的退款金额较大（{amount} 元），"
        "已转交财务人工审核（退款单号 {refund_id}）。"
    ),
    ("large_refund_review", "en"): (
        "The refund for order {order_id} ({amount} yuan) went to finance for review "
        "(refund {refund_id})."
    ),
    ("notification_sent", "zh"): "已按您的要求发送短信通知。",
    ("notification_sent", "en"): "As you asked, I've sent you a text message with this.",
    # failures the user can act on
    (
        "order_not_found",
        "zh",
    ): "没有找到订单 {order_id}。请核对订单号后再试，或告诉我正确的订单号。",
    ("order_not_found", "en"): (
        "I couldn't find order {order_id}. Please check the number, or tell me the right one."
    ),
    ("cannot_refund", "zh"): "订单 {order_id} 当前为“{status}”状态，无需退款。",
    ("cannot_refund", "en"): "Order {order_id} is {status}, so there is nothing to refund.",
    ("cannot_urge", "zh"): "订单 {order_id} 当前为“{status}”状态，无法催单。",
    ("cannot_urge", "en"): "Order {order_id} is {status}, so it can't be hurried.",
    ("not_permitted", "zh"): "抱歉，您的账号无权执行此操作。",
    ("not_permitted", "en"): "Sorry, your account isn't allowed to do that.",
    ("invalid_request", "zh"): "抱歉，这个请求的信息不完整或有误：{reason}。",
    (
        "invalid_request",
        "en",
    ): "Sorry, some details of that request are missing or wrong: {reason}.",
    # system failures and hand-off: never pretend success, never show internals
    ("handoff", "zh"): "抱歉，{task}服务暂时不可用，请稍后再试。我已为您转接人工客服，请稍候。",
    ("handoff", "en"): (
        "Sorry, I can't {task} right now; the service is not available. Please try again "
        "later. I've passed you to a human agent."
    ),
    (
        "unknown_outcome",
        "zh",
    ): "抱歉，{task}的结果暂时无法确认，请勿重复操作。我已为您转接人工客服核实。",
    ("unknown_outcome", "en"): (
        "Sorry, I can't confirm whether the request to {task} went through. Please don't "
        "repeat it; I've passed you to a human agent to check."
    ),
}


def render(name: str, language: str, **values: Any) -> str:
    """Fill the ``name`` template in ``language`` (falling back to Chinese)."""
    template = TEMPLATES.get((name, language)) or TEMPLATES[(name, "zh")]
    return template.format(**values)


def intent_label(intent: str, language: str) -> str:
    """Name an intent for the user."""
    return INTENT_LABELS.get((intent, language), INTENT_LABELS.get((intent, "zh"), intent))


def status_label(status: str, language: str) -> str:
    """Name an order status for the user."""
    return STATUS_LABELS.get((status, language), status)
