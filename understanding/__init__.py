"""Dialogue understanding: reading a user's message into commands, and nothing else.

This package owns the command language (``commands``), what a generator is shown of the
conversation (``view``), the rule-based generator (``rules``) and the model-backed one that
makes one structured call a turn (``model``), the engine that applies commands to the task
stack (``engine``), and the pieces they are made of: intent recognition by rules
(``recognizer``) or a model (``model_recognizer``), courtesies no scenario owns (``acts``),
clause splitting (``split``), yes/no reading (``yesno``), and the chat-model client the model
reader is built with (``chat``; the nodes build the later steps' models with it too). What a
model is asked after that (tool planning, the critique, the reply) is ``planning``, above.

May import ``contract``, ``state``, ``tools.registry`` (cards shown to the model) and the
packages below; never ``planning``, a graph node, the executor's pipeline or a scenario.
"""
