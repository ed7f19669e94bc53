"""The protocol message every agent speaks (``message``), below the state that stores it.

Owns ``ProtocolMessage`` and its limits: masking, JSON safety and the size ceiling. May import
``security`` (the PII detector) and ``config``; ``state.py`` re-exports it with its reducer.
"""
