"""What the agent tells operators about itself: audit, metrics and traces.

Owns the audit log (``audit``: one JSON record per tool call or trace point, written off the
hot path), the metrics derived from those records (``metrics``, Prometheus), OpenTelemetry
spans (``tracing``) and the LangChain callback handler that records the four decision points
of each turn (``trace_callbacks``). May import ``security`` (to mask what it records),
``storage`` and ``config``. The executor and the registry write to it; it never imports them
(live breakers are read through the ``metrics.BreakerStates`` protocol).
"""
