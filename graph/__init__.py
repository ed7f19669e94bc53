"""The compiled graph and how it is served: wiring, checkpoints, the server's edges.

Owns the wiring (``builder``), what ``langgraph.json`` serves (``served``, ``auth``,
``http_app``, ``intake``, ``resume``), checkpoint savers and their masking (``checkpoint``),
time travel (``time_travel``), the per-thread run lock (``run_lock``) and the embedded job
follow-up (``job_followup``). The top of the agent: it may import every package below it
(``scenarios`` to serve them, ``nodes``, ``understanding``, ``contract``, ``state``, ``jobs``,
``tools`` and the rest); only ``cli`` and ``eval`` import it.
"""
