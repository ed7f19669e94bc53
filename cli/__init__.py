"""``reach``: the command line (demo, chat, history, tokens, tools, trace, metrics, model).

Owns the Typer app (``app``) and its commands, one module each, and the local model's fetch
and server (``model``). The top layer: it may import any package, ``eval`` included; no
package imports it.
"""
