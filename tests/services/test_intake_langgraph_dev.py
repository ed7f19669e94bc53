"""Mask at intake under a real ``langgraph dev``: its own checkpointer and run store (our
masking serializer is not in their path) never see the ID number or a PIN a user typed."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph_sdk import get_sync_client

from config.settings import Settings
from security.tokens import issue_token
from tests.helpers import open_database
from tests.services.intake_probe import Secrets, converse, served_record
from tests.services.langgraph_server import TEST_AUTH_SECRET, langgraph_dev

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_no_id_number_or_pin_reaches_the_servers_storage(tmp_path: Path):
    data = tmp_path / "data"
    open_database(data / "business.db").close()
    secrets = Secrets.fresh()
    token = issue_token(
        "u_10001", "customer", 600, settings=Settings(REACH_AUTH_SECRET=TEST_AUTH_SECRET)
    )
    with langgraph_dev(data, REACH_TODAY="2024-06-18") as url:
        client = get_sync_client(url=url, api_key=token)
        threads = converse(client, client, secrets)
        record = served_record(client, threads)
    assert "pii:" in record  # the tokens are what the server kept
    assert secrets.found_in_text(record) == []
    stored = b"".join(
        path.read_bytes() for path in (data / ".langgraph_api").iterdir() if path.is_file()
    )
    assert stored, "langgraph dev wrote its pickle files"
    assert secrets.found_in_bytes(stored) == []
    log = (data / "dev.log").read_bytes()  # the server's log of this run
    assert log and secrets.found_in_bytes(log) == []
