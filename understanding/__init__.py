"""Dialogue understanding: what a user's message does to the conversation, as commands.

This package owns the command language (``commands``), what a generator is shown of the
conversation (``view``), the rule-based generator (``rules``), the model-backed one that makes
one structured call a turn (``model``), and the engine that applies commands to the task
stack (``engine``). It reads the scenario contract (``contract.scenario``) and the text helpers
(``contract.text_match``, ``understanding.acts``, ``understanding.recognizer``) and may import
``state`` for payload types; it never imports a graph node, the executor or a scenario.
"""
