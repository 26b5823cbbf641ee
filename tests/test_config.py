"""Settings precedence: flag, environment, config file, default; keys never shown."""

from __future__ import annotations

import pytest

from dsh_cli.config import ConfigError, load_settings, read_config_file


def test_defaults_when_nothing_is_set():
    settings = load_settings(environ={}, config={})
    assert settings.model == "deepseek-chat" and settings.model_is_default
    assert settings.base_url == "https://api.deepseek.com"
    assert settings.api_key is None and settings.question_timeout is None
    assert settings.notify == "auto"


def test_flag_beats_environment_beats_file():
    env = {"DSH_MODEL": "env-model", "DSH_BASE_URL": "http://env", "DSH_QUESTION_TIMEOUT": "5"}
    file = {"model": "file-model", "base_url": "http://file", "question_timeout": 9}
    assert load_settings(environ={}, config=file).model == "file-model"
    assert load_settings(environ=env, config=file).model == "env-model"
    flagged = load_settings(model="flag-model", base_url="http://flag", question_timeout=1.5,
                            environ=env, config=file)
    assert (flagged.model, flagged.base_url, flagged.question_timeout) == (
        "flag-model", "http://flag", 1.5)
    assert not flagged.model_is_default
    assert load_settings(environ=env, config=file).question_timeout == 5


def test_key_variables_in_order_and_api_key_env_names_one():
    env = {"OPENAI_API_KEY": "o", "DEEPSEEK_API_KEY": "d"}
    assert load_settings(environ=env, config={}).api_key == "d"
    assert load_settings(environ={**env, "DSH_API_KEY": "x"}, config={}).api_key == "x"
    custom = load_settings(environ={**env, "MY_KEY": "m"}, config={"api_key_env": "MY_KEY"})
    assert custom.api_key == "m" and custom.api_key_variable == "MY_KEY"


def test_the_key_never_appears_in_the_repr():
    settings = load_settings(environ={"DSH_API_KEY": "sk-secret-123"}, config={})
    assert "sk-secret-123" not in repr(settings) and "sk-secret-123" not in str(settings)


@pytest.mark.parametrize("file", [{"notify": "siren"}, {"question_timeout": "soon"},
                                  {"question_timeout": -1}])
def test_bad_values_are_config_errors(file):
    with pytest.raises(ConfigError):
        load_settings(environ={}, config=file)


def test_config_file_is_read_from_dsh_home(dsh_home):
    (dsh_home / "config.toml").write_text('model = "demo"\nnotify = "osc9"\n')
    settings = load_settings(environ={})
    assert settings.model == "demo" and settings.notify == "osc9"


def test_broken_config_file_names_the_file(dsh_home):
    (dsh_home / "config.toml").write_text("model = \n")
    with pytest.raises(ConfigError, match=r"config\.toml"):
        read_config_file()


@pytest.mark.parametrize("file", [{"model": 5}, {"base_url": ["x"]}, {"api_key_env": 1},
                                  {"notify": True}])
def test_values_of_the_wrong_type_are_config_errors(file):
    with pytest.raises(ConfigError, match="must be a string"):
        load_settings(environ={}, config=file)


# 0 from the flag means "no timeout" (issue 17); from the environment it is still refused
@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1])
def test_a_question_timeout_must_be_finite_and_positive(value):
    with pytest.raises(ConfigError, match="positive number"):
        load_settings(question_timeout=value, environ={}, config={})
    with pytest.raises(ConfigError, match="positive number"):
        load_settings(environ={"DSH_QUESTION_TIMEOUT": "0"}, config={})


def test_model_timeout_and_deadline_come_from_env_then_config_then_default():
    from dsh_cli.config import load_settings

    default = load_settings(environ={}, config={})
    assert (default.model_timeout, default.model_deadline) == (60.0, 600.0)
    filed = load_settings(environ={}, config={"model_timeout": 5, "model_deadline": 50})
    assert (filed.model_timeout, filed.model_deadline) == (5.0, 50.0)
    both = load_settings(environ={"DSH_MODEL_TIMEOUT": "2", "DSH_MODEL_DEADLINE": "9.5"},
                         config={"model_timeout": 5, "model_deadline": 50})
    assert (both.model_timeout, both.model_deadline) == (2.0, 9.5)


@pytest.mark.parametrize("environ, config", [
    ({"DSH_MODEL_TIMEOUT": "soon"}, {}),
    ({"DSH_MODEL_DEADLINE": "-1"}, {}),
    ({}, {"model_timeout": 0}),
    ({}, {"model_deadline": True}),
])
def test_a_bad_model_timeout_or_deadline_is_a_config_error(environ, config):
    from dsh_cli.config import ConfigError, load_settings

    with pytest.raises(ConfigError) as caught:
        load_settings(environ=environ, config=config)
    assert ("model timeout" in caught.value.message or "model deadline" in caught.value.message)


def test_a_vendor_key_is_chosen_only_for_its_vendors_endpoint():
    only_openai = {"OPENAI_API_KEY": "o"}
    assert load_settings(environ=only_openai, config={}).api_key is None  # DeepSeek's default
    openai = load_settings(environ={**only_openai, "DSH_MODEL": "gpt-4o-mini"}, config={})
    assert (openai.base_url, openai.api_key) == ("https://api.openai.com/v1", "o")
    given = load_settings(base_url="https://api.openai.com/v1",
                          environ={"DEEPSEEK_API_KEY": "d"}, config={})
    assert given.api_key is None and "DEEPSEEK_API_KEY is set" in given.key_advice
    lookalike = load_settings(base_url="https://api.openai.com.evil.example/v1",
                              environ=only_openai, config={})
    assert lookalike.api_key is None
    plain = load_settings(base_url="http://api.openai.com/v1", environ=only_openai, config={})
    assert plain.api_key is None  # a vendor key never travels unencrypted
    anywhere = load_settings(base_url="http://127.0.0.1:9", environ={"DSH_API_KEY": "x"},
                             config={})
    assert anywhere.api_key == "x"


def test_switching_model_moves_to_its_vendor_with_its_key():
    settings = load_settings(environ={"OPENAI_API_KEY": "o", "DEEPSEEK_API_KEY": "d"}, config={})
    assert settings.api_key == "d"
    switched = settings.for_model("gpt-4o-mini")
    assert (switched.base_url, switched.api_key, switched.api_key_variable) == (
        "https://api.openai.com/v1", "o", "OPENAI_API_KEY")
    pinned = load_settings(base_url="https://api.deepseek.com", config={},
                           environ={"OPENAI_API_KEY": "o"}).for_model("gpt-4o-mini")
    assert pinned.base_url == "https://api.deepseek.com" and pinned.api_key is None


def test_every_config_key_is_documented_in_the_readme():
    from pathlib import Path

    from dsh_cli.config import CONFIG_KEYS

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert [key for key in CONFIG_KEYS if f"`{key}" not in readme
            and f"[{key}]" not in readme] == []


@pytest.mark.parametrize("value", ["ntfy publish x", [], [""], ["ntfy", 3]])
def test_notify_command_must_be_an_argv_list(value):
    if value == []:
        assert load_settings(config={"notify_command": value}).notify_command == ()
        return
    with pytest.raises(ConfigError, match="notify_command must be a list of strings"):
        load_settings(config={"notify_command": value})


def test_notify_command_and_delay_are_read():
    settings = load_settings(config={"notify_command": ["ntfy", "publish", "t"],
                                     "notify_delay": 5}, environ={})
    assert settings.notify_command == ("ntfy", "publish", "t") and settings.notify_delay == 5
    assert load_settings(config={}, environ={"DSH_NOTIFY_DELAY": "2"}).notify_delay == 2
    assert load_settings(config={}, environ={}).notify_delay == 30
