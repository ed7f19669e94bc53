"""Which role may use which permission domain.

Permissions are ``domain:action`` strings. A role holding ``domain:any`` may touch resources
it does not own (customer-service staff looking up any order); everyone else is limited to
their own resources, checked against the trusted ``Context.user_id``.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

ROLE_PERMISSIONS: dict[str, frozenset[str]] = {
    "customer": frozenset(
        {
            "order:read",
            "order:refund",
            "order:urge",
            "order:notify",
            "weather:read",
            "flight:book",
            "finance:transfer",
            "finance:refund",
            "appointment:book",
        }
    ),
    "agent": frozenset({"order:read", "order:urge", "order:any", "weather:read"}),
    "analyst": frozenset({"report:read", "weather:read"}),
    "admin": frozenset({"*"}),
}


def role_allows(role: str, permission: str) -> bool:
    """Tell whether ``role`` holds ``permission`` (patterns such as ``order:*`` allowed)."""
    granted = ROLE_PERMISSIONS.get(role, frozenset())
    return any(fnmatchcase(permission, pattern) for pattern in granted)


def acts_on_any_owner(role: str, domain: str) -> bool:
    """Tell whether ``role`` may act on resources of ``domain`` owned by someone else."""
    return role_allows(role, f"{domain}:any")
