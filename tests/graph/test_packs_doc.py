"""``docs/packs.md`` runs as written: its ``desk.py`` is saved and run, its output compared.

The page's complete file is taken out of the page itself, saved as ``desk.py`` in an empty
directory and run as a script (offline: ``REACH_MODEL=rules``, on 2024-06-18); what it prints
must be what the page says it prints, and the ``graph`` it exports for ``langgraph.json``
must answer a turn. The confirmation question's wording is issue 38's: it
is checked for the values it must show, not word for word.
"""

from __future__ import annotations

import re
import runpy
from pathlib import Path

from state import Context
from tests.helpers import set_env

DOC = Path(__file__).resolve().parents[2] / "docs" / "packs.md"
QUESTION = re.compile(r"^desk: (About to|即将为您办理)")


def blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def test_the_pages_example_runs_and_prints_what_the_page_says(
    tmp_path, data_dir, monkeypatch, capsys
):
    page = DOC.read_text(encoding="utf-8")
    (source,) = [b for b in blocks(page, "python") if b.startswith("# desk.py")]
    expected = blocks(page.split("## 3. Run it", 1)[1], "text")[0].rstrip().splitlines()
    (tmp_path / "desk.py").write_text(source, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    set_env(monkeypatch, "REACH_MODEL", "rules")
    set_env(monkeypatch, "REACH_TODAY", "2024-06-18")
    module = runpy.run_path(str(tmp_path / "desk.py"), run_name="__main__")
    printed = capsys.readouterr().out.rstrip().splitlines()
    assert len(printed) == len(expected), "\n".join(printed)
    skip = -1
    for n, (said, written) in enumerate(zip(printed, expected, strict=True)):
        if n == skip:  # the question's second line: how to answer it
            assert re.search(r"yes|确认", said)
        elif QUESTION.match(said):
            assert "B-0001" in said and "3" in said
            skip = n + 1
        else:
            assert said == written
    # the module's ``graph``, what ``langgraph.json`` serves (no checkpointer: the server's)
    served = module["graph"].invoke(
        {"messages": [("user", "B-0001 在哪")]},
        {"configurable": {"thread_id": "served"}},
        context=Context(user_id="rider_2", user_role="customer"),
    )
    assert served["messages"][-1].content == "查询单车的结果：停放站点：Pier；车型：city bike"
