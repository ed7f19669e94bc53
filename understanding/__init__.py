"""Dialogue understanding: what a user's message does, and what a model is asked.

This package owns the command language (``commands``), what a generator is shown of the
conversation (``view``), the rule-based generator (``rules``) and the model-backed one that
makes one structured call a turn (``model``), the engine that applies commands to the task
stack (``engine``), and the pieces they are made of: intent recognition by rules
(``recognizer``) or a model (``model_recognizer``), courtesies no scenario owns (``acts``),
clause splitting (``split``), yes/no reading (``yesno``). It also owns every other prompt a
model is given and what reads its answer: tool planning (``planner``, ``tool_calls``), the
reflect-refine critique (``critique``), the optional model reply (``model_reply``), the token
budget of a prompt (``prompt_budget``) and the store of learned plans (``plans``).

May import ``contract``, ``state``, ``tools.registry`` (cards shown to the model) and the
packages below; never a graph node, the executor's pipeline or a scenario.
"""
