"""``reach eval``: a fixed evaluation set scored by database state and calls, with faults.

``harness`` drives cases through the compiled graph, ``faults`` wraps tool backends with a
seeded injector, ``bare`` is the naive baseline executor, ``report`` writes Markdown/HTML.

It drives the whole agent, so it may import every package but ``cli`` (which imports it for
``reach eval``).
"""
