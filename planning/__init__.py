"""What a model is asked once a message is understood: plan the calls, critique, phrase.

Owns the model's tool planning (``planner``) and the reading of the calls it answers with
(``tool_calls``), the store of learned plans (``plans``), the reflect-refine critique of a
failed step (``critique``), the optional model reply (``model_reply``) and the token budget
these prompts are fitted into (``prompt_budget``). Every answer is checked here before a node
hands it on; the executor still validates each call.

Sits between the nodes, which call it, and ``understanding``, which never imports it. May
import ``understanding`` (slot evidence, a model error's description), ``contract``,
``state``, ``tools`` (cards shown to the model, the call's request type), ``storage`` (where
learned plans are kept) and the packages below; never a graph node, a scenario or the graph.
"""
