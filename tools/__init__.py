"""Tools: the registry of what can be called, and the executor that calls it.

``tools.registry`` holds the cards (one per tool: model view and engineering view), their
lifecycle and versions, parameter types and the call's task context; ``tools.executor`` is the
only path from a planned call to a real system (parse, validate, permission, confirmation,
idempotency, rate limits, breakers, retries, masking, audit). The executor imports the
registry, never the reverse. Both may import ``observability``, ``security``, ``storage`` and
``config``; never ``state``, a node, understanding or a scenario.
"""
