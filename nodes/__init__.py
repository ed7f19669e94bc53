"""The graph's nodes and the routers between them; nothing here names a scenario.

Owns one module per node (``intent``, ``slot_filling``, ``propose``, ``tool``,
``reflect_refine``, ``clarify``, ``handoff``, ``reply``, ``compact``, ``job_update``), the
routers (``routing``), what the acting nodes share (``actions``, ``confirmation``,
``pending``, ``plan_cache``), the generic nodes' wording (``wording``), the helpers every node
uses (``common``) and the backends injected into them (``services``). May import
``planning``, ``understanding``, ``contract``, ``state``, ``jobs``, ``tools`` and the packages
below; never a scenario or the graph (the builder hands the scenarios in).
"""
