"""The evaluation's model cache replays only what the model already answered to the same body.

The proxy sits between ``ChatOpenAI`` and a real (fake) OpenAI-compatible server on
loopback. A second identical request must not reach the server; a request differing in one
character must; answers the client never received (an error status, or one slower than the
client's timeout) must not be replayed. The slice rule is checked for what it promises.
"""

from __future__ import annotations

from pathlib import Path

from langchain_openai import ChatOpenAI

from eval.case_set import SLICE_TAGS, load_cases, model_slice
from eval.harness import RunResult, run_evaluation
from eval.model_cache import CachingProxy, ModelCache, request_key
from tests.fakes.openai_server import FakeOpenAIServer, Scripted, openai_server

__all__ = ["openai_server"]


def _client(base_url: str) -> ChatOpenAI:
    return ChatOpenAI(
        base_url=base_url, api_key="test", model="fake-model", temperature=0, max_retries=0
    )


def test_identical_request_is_served_from_the_cache(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(Scripted(content="first"), Scripted(content="second"))
    cache = ModelCache(tmp_path / "cache.sqlite")
    with CachingProxy(cache, openai_server.base_url, client_timeout_s=20) as proxy:
        llm = _client(proxy.base_url)
        one = llm.invoke("where is my order OD-1?")
        two = llm.invoke("where is my order OD-1?")
        assert (one.content, two.content) == ("first", "first")
        assert len(openai_server.requests) == 1
        three = llm.invoke("where is my order OD-2?")
        assert three.content == "second"
        assert len(openai_server.requests) == 2
        assert (proxy.stats.hits, proxy.stats.misses, proxy.stats.stored) == (1, 2, 2)
    # the file outlives the proxy: a new proxy on it still answers without the server
    with CachingProxy(cache, openai_server.base_url, client_timeout_s=20) as proxy:
        assert _client(proxy.base_url).invoke("where is my order OD-1?").content == "first"
        assert len(openai_server.requests) == 2
    cache.close()


def test_errors_are_relayed_and_never_stored(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(Scripted(status=500, content="boom"), Scripted(content="ok"))
    cache = ModelCache(tmp_path / "cache.sqlite")
    with CachingProxy(cache, openai_server.base_url, client_timeout_s=20) as proxy:
        llm = _client(proxy.base_url)
        try:
            llm.invoke("hello")
        except Exception as exc:  # noqa: BLE001 - the client's own error type for a 500
            assert "500" in str(exc) or "boom" in str(exc)
        else:
            raise AssertionError("a 500 must reach the client")
        assert llm.invoke("hello").content == "ok"  # asked again, not replayed
        assert proxy.stats.statuses == {500: 1, 200: 1}
        assert proxy.stats.not_stored == 1
    assert len(cache) == 1
    cache.close()


def test_an_answer_slower_than_the_client_timeout_is_not_stored(
    openai_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    openai_server.push(Scripted(content="late", delay_s=0.3))
    cache = ModelCache(tmp_path / "cache.sqlite")
    with CachingProxy(cache, openai_server.base_url, client_timeout_s=0.1) as proxy:
        status, _, _ = proxy.forward(
            "POST",
            "/v1/chat/completions",
            {"content-type": "application/json"},
            b'{"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}',
        )
        assert status == 200
        assert proxy.stats.not_stored == 1
    assert len(cache) == 0
    cache.close()


def test_request_key_ignores_key_order_but_not_content() -> None:
    a = request_key("POST", "/v1/chat/completions", b'{"a": 1, "b": [1, 2]}')
    b = request_key("POST", "/v1/chat/completions", b'{"b": [1, 2], "a": 1}')
    c = request_key("POST", "/v1/chat/completions", b'{"a": 1, "b": [2, 1]}')
    assert a == b
    assert a != c


def test_model_slice_covers_every_scenario_and_tag_and_is_fixed() -> None:
    cases = load_cases()
    chosen = model_slice(cases)
    assert model_slice(cases) == chosen
    assert {case.scenario for case in chosen} == {case.scenario for case in cases}
    assert set(SLICE_TAGS) <= {tag for case in chosen for tag in case.tags}
    for scenario in {case.scenario for case in cases}:
        langs = {case.lang for case in cases if case.scenario == scenario}
        assert langs == {case.lang for case in chosen if case.scenario == scenario}
    assert 24 <= len(chosen) <= 34  # one per scenario, stratum and language: it grows with them


def test_an_interrupted_evaluation_keeps_only_finished_trials() -> None:
    cases = [case for case in load_cases() if case.id in ("st-hello-zh", "wx-beijing-zh")]
    seen: list[str] = []

    def stop_in_trial_three(run: RunResult) -> None:
        seen.append(run.case)
        if len(seen) == 5:  # the first run of the third trial
            raise KeyboardInterrupt

    evaluation = run_evaluation(cases, trials=3, agents=("agent",), progress=stop_in_trial_three)
    assert evaluation.interrupted
    assert evaluation.trials == 2
    assert sorted((run.case, run.trial) for run in evaluation.runs) == sorted(
        (case.id, trial) for case in cases for trial in range(2)
    )
