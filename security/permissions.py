"""Which role may use which permission.

Permissions are ``domain:action`` strings, granted to roles by the scenarios that need them
(each scenario declares its own grants; ``Permissions`` merges them). A role holding
``domain:any`` may touch resources it does not own (customer-service staff looking up any
order); everyone else is limited to their own resources, checked against the trusted
``Context.user_id``. ``admin`` holds every permission.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

ROLES = frozenset({"customer", "agent", "analyst", "admin"})
"""The roles an authenticated identity may carry; anything else is treated as a customer."""

BASE_GRANTS: Mapping[str, frozenset[str]] = {"admin": frozenset({"*"})}
"""Grants that hold whatever scenarios are loaded."""


@dataclass(frozen=True)
class Permissions:
    """Role → granted permission patterns (``order:*`` style patterns allowed)."""

    grants: Mapping[str, frozenset[str]] = field(default_factory=lambda: dict(BASE_GRANTS))
    """Role → patterns; never changed once built (``allows`` remembers its answers)."""
    _answers: dict[tuple[str, str], bool] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def merged(cls, *grant_maps: Mapping[str, Iterable[str]]) -> Permissions:
        """Merge grant maps (the base grants included) into one table."""
        merged: dict[str, set[str]] = {role: set(p) for role, p in BASE_GRANTS.items()}
        for grants in grant_maps:
            for role, permissions in grants.items():
                merged.setdefault(role, set()).update(permissions)
        return cls({role: frozenset(p) for role, p in merged.items()})

    def allows(self, role: str, permission: str) -> bool:
        """Tell whether ``role`` holds ``permission``.

        Every call of a tool asks twice; matching each pattern with ``fnmatch`` each time
        was a tool call's slowest check, so the answer is remembered (few roles, few
        permissions: the memo stays small).
        """
        known = self._answers.get((role, permission))
        if known is None:
            granted = self.grants.get(role, frozenset())
            known = any(fnmatchcase(permission, pattern) for pattern in granted)
            if len(self._answers) < 4096:
                self._answers[(role, permission)] = known
        return known

    def acts_on_any_owner(self, role: str, domain: str) -> bool:
        """Tell whether ``role`` may act on resources of ``domain`` owned by someone else."""
        return self.allows(role, f"{domain}:any")

    def roles(self) -> list[str]:
        """Return the roles that hold any grant."""
        return sorted(self.grants)
