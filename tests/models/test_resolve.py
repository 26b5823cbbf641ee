"""The model table: a model name picks one row by exact name or prefix; rows load lazily."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dsh_cli.config import load_settings
from dsh_cli.models import ModelError
from dsh_cli.models.resolve import (
    MISSING_API_KEY,
    MODEL_BACKENDS,
    ModelBackend,
    backend_for,
    needs_api_key,
    resolve_model,
)


def settings(model: str, **environ: str):
    return load_settings(model=model, environ=environ, config={})


class Named:
    """A stand-in model that records what its factory was given."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def stream(self, messages, tools):
        raise NotImplementedError
        yield


def test_demo_and_script_need_no_key(tmp_path):
    script = tmp_path / "turns.json"
    script.write_text(json.dumps({"turns": [{"content": "hi"}]}), encoding="utf-8")
    assert type(resolve_model(settings("demo"))).__name__ == "DemoModel"
    scripted = resolve_model(settings(f"script:{script}"))
    assert (type(scripted).__name__, scripted.name) == ("ScriptedModel", f"script:{script}")
    assert not needs_api_key("demo") and not needs_api_key(f"script:{script}")


def test_any_other_name_is_the_openai_compatible_client_and_needs_a_key():
    assert needs_api_key("deepseek-chat") and needs_api_key("gpt-4o-mini")
    with pytest.raises(ModelError) as caught:
        resolve_model(settings("deepseek-chat"))
    assert caught.value.code == MISSING_API_KEY
    assert "model deepseek-chat at api.deepseek.com needs an API key" in caught.value.message
    model = resolve_model(settings("gpt-4o-mini", DSH_API_KEY="k",
                                   DSH_BASE_URL="http://127.0.0.1:9/v1"))
    assert (type(model).__name__, model.name, model.base_url) == (
        "OpenAIChatModel", "gpt-4o-mini", "http://127.0.0.1:9/v1")


def test_a_new_prefix_row_serves_its_names_with_the_rest(monkeypatch):
    seen = []

    def build(chosen, rest):
        seen.append((chosen.model, rest))
        return Named(rest)

    monkeypatch.setitem(MODEL_BACKENDS, "local:", ModelBackend(build))
    assert resolve_model(settings("local:llama3")).name == "llama3"
    assert seen == [("local:llama3", "llama3")]
    assert not needs_api_key("local:llama3")
    assert backend_for("locally")[0] is MODEL_BACKENDS[""]  # a prefix needs its colon


def test_an_exact_name_beats_a_prefix_and_a_longer_prefix_a_shorter(monkeypatch):
    rows = {key: ModelBackend(lambda chosen, rest: Named(rest)) for key in
            ("a:", "a:b:", "a:exact")}
    for key, row in rows.items():
        monkeypatch.setitem(MODEL_BACKENDS, key, row)
    assert backend_for("a:exact") == (rows["a:exact"], "")
    assert backend_for("a:b:c") == (rows["a:b:"], "c")
    assert backend_for("a:c") == (rows["a:"], "c")
    assert backend_for("other") == (MODEL_BACKENDS[""], "other")


def test_a_row_can_require_a_key(monkeypatch):
    monkeypatch.setitem(MODEL_BACKENDS, "paid:",
                        ModelBackend(lambda chosen, rest: Named(rest), needs_api_key=True))
    with pytest.raises(ModelError) as caught:
        resolve_model(settings("paid:x"))
    assert caught.value.code == MISSING_API_KEY
    assert resolve_model(settings("paid:x", DSH_API_KEY="k")).name == "x"


def test_the_table_imports_no_backend_until_one_is_chosen():
    code = ("import json, sys; import dsh_cli.models.resolve as r; "
            "before = sorted(m for m in sys.modules if m.startswith('dsh_cli.models.')); "
            "from dsh_cli.config import load_settings; "
            "r.resolve_model(load_settings(model='demo', environ={}, config={})); "
            "after = sorted(m for m in sys.modules if m.startswith('dsh_cli.models.')); "
            "print(json.dumps([before, after, 'openai' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    before, after, openai_loaded = json.loads(done.stdout)
    assert before == ["dsh_cli.models.base", "dsh_cli.models.resolve"]
    assert after == ["dsh_cli.models.base", "dsh_cli.models.demo", "dsh_cli.models.resolve"]
    assert openai_loaded is False
