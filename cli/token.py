"""``reach token USER_ID``: print a signed access token for the served API.

A developer pastes it into agent-chat-ui's API key field (sent as ``x-api-key``) or sends it
as ``Authorization: Bearer <token>``. The token is signed with the same key ``langgraph dev``
verifies with (``REACH_AUTH_SECRET``, or the key generated into the data directory), so run
both from the same directory or with the same ``REACH_DATA_DIR``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer

from config.settings import get_settings
from security.tokens import ROLES, issue_token, parse_ttl, read_token


def token(
    user_id: Annotated[str, typer.Argument(help="The user the token speaks for, e.g. u_10001.")],
    role: Annotated[
        str, typer.Option("--role", help=f"One of: {', '.join(sorted(ROLES))}.")
    ] = "customer",
    ttl: Annotated[
        str | None,
        typer.Option("--ttl", help="Lifetime such as 30m, 1h, 2d (default: REACH_TOKEN_TTL_S)."),
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Where the generated signing key lives."),
    ] = None,
) -> None:
    """Print an access token for USER_ID; the token alone is on the last line."""
    settings = get_settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    if role not in ROLES:
        raise typer.BadParameter(f"unknown role {role!r}; use one of {sorted(ROLES)}")
    try:
        lifetime = parse_ttl(ttl) if ttl is not None else None
    except ValueError as error:
        raise typer.BadParameter(str(error)) from None
    value = issue_token(user_id, role, lifetime, settings=settings)
    identity = read_token(value, settings=settings)
    expires = datetime.fromtimestamp(getattr(identity, "expires_at", 0.0), UTC)
    typer.echo(
        f"# {user_id} ({role}), expires {expires:%Y-%m-%d %H:%M} UTC. "
        "Send as 'Authorization: Bearer <token>' or 'x-api-key: <token>'."
    )
    typer.echo(value)
