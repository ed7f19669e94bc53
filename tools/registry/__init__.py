"""The tool registry: what a tool is, whether it may be called now, and with what.

Owns the cards and the registry (``cards``: ``ToolCard``, ``ToolRegistry``, ``ToolContext``),
the operators' lifecycle state (``lifecycle``: enable, disable, deprecate, pin, retire), the
task context a call carries (``context``: the task's history and its guards) and the strict
parameter types cards use (``types``). May import ``observability``, ``security``,
``storage`` and ``config``; never the executor.
"""
