"""The official checkpointer conformance suite against PlainRedisSaver, async and sync."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.report import ProgressCallbacks
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from graph.checkpoint.plain_redis import PlainRedisSaver

pytestmark = pytest.mark.integration

EXPECTED = {
    "put",
    "put_writes",
    "get_tuple",
    "list",
    "delete_thread",
    "copy_thread",
    "delete_for_runs",
    "prune",
}


class SyncDrivenSaver(PlainRedisSaver):
    """Route the suite's async calls to the sync implementation, to test that half too."""

    async def aput(self, config, checkpoint, metadata, new_versions):
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config, writes, task_id, task_path=""):
        return self.put_writes(config, writes, task_id, task_path)

    async def aget_tuple(self, config):
        return self.get_tuple(config)

    async def alist(self, config, *, filter=None, before=None, limit=None) -> AsyncIterator[Any]:
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def adelete_thread(self, thread_id):
        return self.delete_thread(thread_id)

    async def acopy_thread(self, source_thread_id, target_thread_id):
        return self.copy_thread(source_thread_id, target_thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]):
        return self.delete_for_runs(run_ids)

    async def aprune(self, thread_ids, *, strategy="keep_latest"):
        return self.prune(thread_ids, strategy=strategy)


def summarize(report) -> tuple[int, int, set[str]]:
    passed = sum(r.tests_passed for r in report.results.values())
    failed = sum(r.tests_failed for r in report.results.values())
    full = {name for name, r in report.results.items() if r.passed is True}
    return passed, failed, {getattr(c, "value", c) for c in full}


@pytest.mark.parametrize("mode", ["async", "sync"])
async def test_conformance_suite(redis_url, mode, capsys):
    cls = PlainRedisSaver if mode == "async" else SyncDrivenSaver

    @checkpointer_test(name=f"PlainRedisSaver[{mode}]")
    async def factory():
        yield cls(Redis.from_url(redis_url), AsyncRedis.from_url(redis_url), prefix=f"conf-{mode}")

    report = await validate(factory, progress=ProgressCallbacks.quiet())
    passed, failed, full = summarize(report)
    with capsys.disabled():
        print(
            f"\nconformance [{mode}]: {passed} passed, {failed} failed, capabilities {sorted(full)}"
        )
    assert failed == 0
    assert report.passed_all()
    assert full == EXPECTED
