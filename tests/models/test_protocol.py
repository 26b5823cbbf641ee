"""Every built-in model keeps the ``ChatModel`` protocol, ``on_retry`` included."""

from __future__ import annotations

import asyncio

from fakes.openai_server import Reply

from dsh_cli.config import load_settings
from dsh_cli.models.base import ModelError, RetryNotice, ignore_retry
from dsh_cli.models.demo import DemoModel
from dsh_cli.models.resolve import resolve_model
from dsh_cli.models.scripted import ScriptedModel

KEY = "sk-test-0123456789abcdef"
USER = [{"role": "user", "content": "hi"}]


def api_model(server):
    """The model a front door gets for an API model name, retrying without a wait."""
    settings = load_settings(model="test-model", base_url=server.base_url,
                             environ={"DSH_API_KEY": KEY}, config={})
    model = resolve_model(settings)
    model.retry_base_delay = 0.001
    return model


def streamed(model):
    async def go():
        try:
            return [item async for item in model.stream(USER, [])]
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_models_that_never_retry_have_the_no_op_hook():
    notice = RetryNotice(1, 0.1, ModelError("boom"))
    for model in (DemoModel(), ScriptedModel([{"content": "hi"}])):
        assert model.on_retry is ignore_retry
        assert model.on_retry(notice) is None


def test_a_hook_set_after_the_model_is_built_hears_each_retry(server):
    model = api_model(server)
    assert model.on_retry is ignore_retry
    notices = []
    model.on_retry = notices.append  # what a front door does once it has a renderer
    server.enqueue(Reply.error(500, "boom", type="server_error"), Reply.text("finally"))
    assert streamed(model)[-1].content == "finally"
    assert [(n.attempt, n.error.code) for n in notices] == [(1, "MODEL_SERVER")]


def test_a_retry_with_no_hook_set_still_succeeds(server):
    model = api_model(server)
    server.enqueue(Reply.error(503, "later", type="server_error"), Reply.text("ok"))
    assert streamed(model)[-1].content == "ok"
    assert len(server.requests) == 2
