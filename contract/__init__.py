"""The scenario contract: what a capability declares, and what the generic code reads.

Owns ``scenario`` (``Scenario``, ``TaskSpec``, ``ScenarioSet``: tasks, tool cards, grants,
cues, slot extractors, wording, describers and sub-agents) and ``text_match`` (the text
normalization every cue and pattern is matched under, which scenarios write their extractors
with). Scenarios implement it; understanding and the nodes read it; so it sits below both.
May import ``state`` (payload types), ``tools`` (``ToolCard``, failure classes) and the
packages below them; never a node, understanding or a scenario.
"""
