"""The action executor: every tool call goes through one pipeline.

Owns the pipeline (``pipeline``: ``ActionExecutor``, the envelope every call ends in), the
admission of a call (``admission``: rate limit, cache and idempotency claim together), its
guards (``guards``: rate limiter, circuit breakers), the stores of idempotency records and
cached results (``stores``), argument parsing (``parsing``), the errors handlers raise
(``errors``), the one failure vocabulary (``failures``) and what a client may see of a
result (``client_view``). May import ``tools.registry`` and the packages below ``tools``.
"""
