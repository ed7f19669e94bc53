"""The tool registry: what a tool is, whether it may be called now, and with what.

Owns the cards and the registry (``cards``: ``ToolCard``, ``ToolRegistry``), the operators'
lifecycle state (``lifecycle``: enable, disable, deprecate, pin, retire), the call's context
(``context``: ``ToolContext``, the task's history and its guards), what a model and a refusal
are shown of a card (``views``) and the strict parameter types cards use (``types``). May
import ``observability``, ``security``, ``storage`` and ``config``; never the executor.
"""
