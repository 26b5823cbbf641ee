"""A key goes only to its vendor: ``dsh run`` through a recording proxy on 127.0.0.1.

The proxy (``HTTPS_PROXY``) writes down the host of every ``CONNECT`` it is asked for and
refuses it, so no test reaches any real network: a run that would send a key shows where
it would have gone, and a run that may send none makes no connection at all.
"""

from __future__ import annotations

import os
import socket
import subprocess
import threading

import pytest
from harness.dsh_under_test import DSH


class RecordingProxy:
    """An HTTP proxy that records each request line's target and answers 403."""

    def __init__(self) -> None:
        self.targets: list[str] = []
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._socket.settimeout(0.2)
        self.port = self._socket.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                peer, _ = self._socket.accept()
            except TimeoutError:
                continue
            with peer:
                peer.settimeout(5)
                head = b""
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = peer.recv(4096)
                    if not chunk:
                        break
                    head += chunk
                line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
                if len(line) >= 2:
                    self.targets.append(line[1])
                peer.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._socket.close()


@pytest.fixture
def proxy():
    recording = RecordingProxy()
    yield recording
    recording.close()


def run(proxy: RecordingProxy, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    base = {name: value for name, value in os.environ.items()
            if name.lower() not in ("all_proxy", "http_proxy", "https_proxy", "no_proxy")}
    via = f"http://127.0.0.1:{proxy.port}"
    return subprocess.run([DSH, "run", *args, "hello"], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL,
                          env={**base, "HTTPS_PROXY": via, "https_proxy": via,
                               "DSH_MODEL_DEADLINE": "1", **env})


def test_only_an_openai_key_never_goes_to_deepseek_and_says_what_to_set(proxy):
    result = run(proxy, {"OPENAI_API_KEY": "sk-openai-only"})
    assert proxy.targets == []
    assert result.returncode == 1
    assert result.stderr.startswith("dsh: MISSING_API_KEY: model deepseek-chat at "
                                    "api.deepseek.com needs an API key: set DEEPSEEK_API_KEY")
    assert "OPENAI_API_KEY is set, but it is sent only to api.openai.com" in result.stderr
    assert "sk-openai-only" not in result.stderr


def test_an_openai_model_with_an_openai_key_goes_to_openai(proxy):
    result = run(proxy, {"OPENAI_API_KEY": "sk-openai-only", "DSH_MODEL": "gpt-4o-mini"})
    assert result.returncode == 1  # the proxy refuses: MODEL_CONNECTION
    assert set(proxy.targets) == {"api.openai.com:443"}


def test_a_deepseek_key_never_goes_to_another_base_url(proxy):
    result = run(proxy, {"DEEPSEEK_API_KEY": "sk-deepseek-only"},
                 "--base-url", "https://api.openai.com/v1", "-m", "gpt-4o-mini")
    assert proxy.targets == []
    assert result.returncode == 1 and "MISSING_API_KEY" in result.stderr
    assert "set OPENAI_API_KEY (sent only to api.openai.com), or DSH_API_KEY" in result.stderr
    assert "DEEPSEEK_API_KEY is set, but it is sent only to api.deepseek.com" in result.stderr


def test_a_deepseek_key_goes_to_deepseek(proxy):
    result = run(proxy, {"DEEPSEEK_API_KEY": "sk-deepseek-only"})
    assert result.returncode == 1
    assert set(proxy.targets) == {"api.deepseek.com:443"}


def test_dsh_api_key_goes_to_the_base_url_given_and_a_vendor_key_does_not(proxy):
    other = ("--base-url", "https://models.example.net/v1", "-m", "some-model")
    result = run(proxy, {"OPENAI_API_KEY": "o", "DEEPSEEK_API_KEY": "d"}, *other)
    assert proxy.targets == [] and "MISSING_API_KEY" in result.stderr
    assert "set DSH_API_KEY" in result.stderr
    result = run(proxy, {"DSH_API_KEY": "sk-dsh"}, *other)
    assert result.returncode == 1
    assert set(proxy.targets) == {"models.example.net:443"}
