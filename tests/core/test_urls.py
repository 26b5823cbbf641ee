"""``core/urls.py``: the URL dsh requests is the one it checked, and no user information
is shown (property tests over what ``httpx2.URL``, the client's parser, accepts)."""

from __future__ import annotations

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_cli.core.errors import CONFIG_ERROR, ConfigError
from dsh_cli.core.urls import endpoint, masked, parse_endpoint

# user information as RFC 3986 3.2.1 allows it (unreserved, sub-delims, ":" and %-escapes)
# and a stray "@" as a password may hold, around a marker no host or path below holds
MARK = "Qz7secret"
_AROUND = st.text(st.sampled_from("abcXYZ019-._~!$&'()*+,;=:%@"), max_size=12)
USERINFO = st.tuples(_AROUND, _AROUND).map(lambda parts: parts[0] + MARK + parts[1])
HOSTS = st.sampled_from(["127.0.0.1", "localhost", "api.example.com", "[::1]", "10.0.0.7"])


@settings(max_examples=300, deadline=None)
@given(userinfo=USERINFO, host=HOSTS, port=st.integers(1, 65535),
       path=st.sampled_from(["", "/", "/v1", "/a/b?c=d"]))
def test_what_is_shown_never_holds_the_user_information(userinfo, host, port, path):
    url = f"http://{userinfo}@{host}:{port}{path}"
    try:
        sent = httpx2.URL(url)
    except httpx2.InvalidURL:
        assert parse_endpoint(url) is None
        return
    parsed = parse_endpoint(url)
    assert parsed is not None
    # what dsh judges is what the client requests
    assert (parsed.host, parsed.port or sent.port) == (sent.host.lower(), sent.port)
    for shown in (parsed.where, parsed.shown, masked(f"cannot reach {url}: refused")):
        assert MARK not in shown and "***@" in shown


@pytest.mark.parametrize("text", ["http://[::1/v1", "ftp://x/v1", "http:///v1", "/v1",
                                  "http://h:0/v1", "http://h:70000/v1", "", "   "])
def test_what_is_no_http_url_with_a_host_is_a_config_error_naming_the_key(text):
    assert parse_endpoint(text) is None
    with pytest.raises(ConfigError) as raised:
        endpoint(text, "--base-url")
    assert raised.value.code == CONFIG_ERROR
    assert raised.value.message.startswith("--base-url: ")


@pytest.mark.parametrize(("url", "keeps"), [
    ("https://as.example/token", True), ("http://127.0.0.1:9/token", True),
    ("http://localhost/token", True), ("http://[::1]:9/token", True),
    ("http://10.9.9.9/token", False), ("http://127.0.0.1.evil.example/token", False)])
def test_a_credential_travels_over_https_or_on_this_machine_only(url, keeps):
    parsed = parse_endpoint(url)
    assert parsed is not None and parsed.keeps_secrets is keeps
