"""``reach token`` prints a token the server accepts, alone on the last line."""

from __future__ import annotations

import typer
from typer.testing import CliRunner

from cli.token import token
from config.settings import Settings
from security.tokens import verify_token

app = typer.Typer()
app.command()(token)


@app.callback()
def _group() -> None:
    """Make ``token`` a subcommand, as in ``reach``."""


def test_prints_a_verifiable_token_on_the_last_line(tmp_path):
    result = CliRunner().invoke(
        app, ["token", "u_90001", "--role", "agent", "--ttl", "30m", "--data-dir", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    identity = verify_token(last, settings=Settings(REACH_DATA_DIR=tmp_path))
    assert identity is not None
    assert (identity.user_id, identity.role) == ("u_90001", "agent")
    assert (tmp_path / "auth.key").exists()


def test_refuses_an_unknown_role_or_ttl(tmp_path):
    runner = CliRunner()
    bad_role = runner.invoke(app, ["token", "u_1", "--role", "boss", "--data-dir", str(tmp_path)])
    bad_ttl = runner.invoke(app, ["token", "u_1", "--ttl", "soon", "--data-dir", str(tmp_path)])
    assert bad_role.exit_code != 0 and bad_ttl.exit_code != 0
    assert not (tmp_path / "auth.key").exists(), "nothing is generated for a refused request"
