"""What keeps secrets, identities and untrusted text where they belong.

Owns the one detector of personal identifiers (``pii``), the identity vault (``vault``),
masking at intake (``intake``), the flagging of instruction-like tool output (``untrusted``),
the SQL guard and its read-only runner (``sql_guard``, ``readonly_sql``), signed access tokens
(``tokens``) and roles and permissions (``permissions``). May import ``storage`` and
``config``; never a tool, a node or the graph.
"""
