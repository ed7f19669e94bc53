"""The graph ``langgraph.json`` serves (``langgraph dev``, Aegra): compiled without a checkpointer.

The server brings its own checkpointer. Building it opens the executor's and the tools' stores
in the data directory, so it lives here, imported by the server only, and not in
``graph.builder``, which every command and test imports.
"""

from __future__ import annotations

from graph.builder import make_builder
from graph.resume import checked
from nodes.services import Services
from observability.trace_callbacks import trace_callbacks
from scenarios import SCENARIOS

graph = checked(make_builder(Services(scenarios=SCENARIOS)).compile(name="agent")).with_config(
    callbacks=trace_callbacks()
)
"""The served graph, traced to the audit log like an embedded one."""
