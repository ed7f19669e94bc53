"""What every layer is given from outside: settings, limits and the clock.

Owns ``settings`` (every environment variable, read once into a ``Settings`` that is passed
down), ``limits`` (the size and shape bounds of anything that enters the agent, and the
compact JSON helpers that enforce them) and ``clock`` (injectable time, so tests never sleep).
The bottom layer: it imports no other package of the project.
"""
