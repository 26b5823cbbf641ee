"""MCP server configuration: the ``mcpServers`` JSON format shared by Claude Code, Claude
Desktop, Cursor and Gemini CLI (VS Code's top-level ``servers`` accepted too).

``${VAR}`` and ``${VAR:-default}`` are expanded in every string. A file that cannot be read
or holds a bad entry is a ``CONFIG_ERROR`` naming the file and the entry; nothing here
imports the MCP SDK.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_cli.core.errors import ConfigError
from dsh_cli.core.limits import MCP_MESSAGE_BYTES as DEFAULT_MAX_MESSAGE
from dsh_cli.core.urls import endpoint, parse_endpoint

__all__ = [
    "DEFAULT_MAX_MESSAGE",
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "PROJECT_FILE",
    "SIGNING_ALGORITHMS",
    "USER_FILE",
    "OAuthSettings",
    "ServerConfig",
    "decode_file",
    "expand",
    "load_servers",
    "parse_servers",
]

DEFAULT_STARTUP_TIMEOUT = 10.0
DEFAULT_TOOL_TIMEOUT = 120.0
USER_FILE = "mcp.json"  # in the config directory
PROJECT_FILE = ".mcp.json"  # in the working directory, only once trusted
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,48}$")
# the string keys of ``oauth``, then its one list
_OAUTH_KEYS = ("client_id", "client_secret_env", "private_key_env", "signing_algorithm",
               "issuer", "client_metadata_url", "assertion_env", "id_token_env",
               "idp_token_endpoint", "idp_client_id", "scopes")
# the keys naming a variable, and what it holds (never the value itself)
_VARIABLE_KEYS = (("client_secret_env", "secret"), ("private_key_env", "key"),
                  ("assertion_env", "assertion"), ("id_token_env", "ID token"))
# asymmetric JWS algorithms (RFC 7518, 8037): a private key signs, the server holds the public
SIGNING_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256",
                      "ES384", "ES512", "EdDSA")


@dataclass(frozen=True)
class OAuthSettings:
    """A remote server's ``oauth`` keys: a registered client, its secret's variable, scopes."""

    client_id: str | None = None
    # the name of the environment variable holding the secret (never the secret itself):
    # with it, dsh uses the client_credentials grant, no browser
    client_secret_env: str | None = None
    # the same for a PEM private key: client_credentials with a signed JWT (private_key_jwt)
    private_key_env: str | None = None
    signing_algorithm: str = "RS256"
    # the authorization server the client's credentials belong to: without it, the MCP
    # server's metadata decides where they are sent
    issuer: str | None = None
    # a client metadata document the user hosts: the client_id where the server takes one
    client_metadata_url: str | None = None
    # the variable holding a JWT the workload's platform issued: the jwt-bearer grant
    # itself (workload identity, SEP-1933; no secret)
    assertion_env: str | None = None
    # the variable holding the user's ID token, exchanged at the identity provider's token
    # endpoint (as idp_client_id) for an ID-JAG, the jwt-bearer grant (SEP-990)
    id_token_env: str | None = None
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    scopes: tuple[str, ...] = ()

    @property
    def own_login(self) -> str | None:
        """The key naming what the entry logs in with by itself, as ``auth.http_auth`` picks
        it: a JWT as the grant, else a secret or a key with ``client_id``; None: a login
        made in a browser (``dsh mcp login``)."""
        for key in ("assertion_env", "id_token_env"):
            if getattr(self, key):
                return key
        if self.client_id:
            for key in ("client_secret_env", "private_key_env"):
                if getattr(self, key):
                    return key
        return None

    @property
    def browserless(self) -> bool:
        """Whether the entry logs in by itself: ``dsh mcp login`` cannot help it."""
        return self.own_login is not None


@dataclass(frozen=True)
class ServerConfig:
    """One server: a command to start (stdio) or a URL (Streamable HTTP)."""

    name: str
    source: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    include_tools: tuple[str, ...] | None = None
    exclude_tools: tuple[str, ...] = ()
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    max_mcp_message: int = DEFAULT_MAX_MESSAGE
    # "auto" negotiates the era (2026-07-28 first); "legacy" speaks only the session era
    # and sends no probe, for a server that mishandles one
    protocol: str = "auto"
    oauth: OAuthSettings = field(default_factory=OAuthSettings)
    # the ${VAR}s of its entry that had no value (they expanded to nothing)
    unset: tuple[str, ...] = field(default=(), compare=False)

    @property
    def transport(self) -> str:
        return "http" if self.url is not None else "stdio"

    @property
    def endpoint(self) -> list[str]:
        """What the server is (its URL, or its command line), not what it is called."""
        return [self.url] if self.url is not None else [self.command or "", *self.args]

    def offers(self, tool: str) -> bool:
        """Whether the include/exclude filters let ``tool`` through."""
        if self.include_tools is not None and tool not in self.include_tools:
            return False
        return tool not in self.exclude_tools


def expand(value: str, environ: Mapping[str, str], unset: list[str] | None = None) -> str:
    """``${VAR}`` from the environment (empty when unset), ``${VAR:-default}`` with a default;
    the names of unset variables with no default are added to ``unset``."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        found = environ.get(name)
        if found:
            return found
        if default is None and unset is not None:
            unset.append(name)
        return default if default is not None else ""

    return _VARIABLE.sub(one, value)


def load_servers(paths: list[Path], environ: Mapping[str, str] | None = None,
                 ) -> list[ServerConfig]:
    """Every server of ``paths`` in order; a later file's server replaces an earlier one."""
    environ = os.environ if environ is None else environ
    servers: dict[str, ServerConfig] = {}
    for path in paths:
        try:
            data = path.read_bytes()
        except OSError as error:
            raise ConfigError(f"cannot read {path}: {error.strerror or error}") from None
        for server in parse_servers(decode_file(data, path), str(path), environ):
            servers[server.name] = server
    return list(servers.values())


def decode_file(data: bytes, path: Path) -> Any:
    """The JSON document of a config file's bytes; ``ConfigError`` naming the file."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except (ValueError, RecursionError) as error:
        raise ConfigError(f"{path}: not valid JSON: {error}") from None


def parse_servers(document: Any, source: str, environ: Mapping[str, str]) -> list[ServerConfig]:
    """The servers of one decoded file (``mcpServers`` or VS Code's ``servers``)."""
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: expected a JSON object with \"mcpServers\"")
    table = document.get("mcpServers", document.get("servers"))
    if table is None:
        raise ConfigError(f"{source}: no \"mcpServers\" (or \"servers\") object")
    if not isinstance(table, dict):
        raise ConfigError(f"{source}: \"mcpServers\" must be an object of servers by name")
    servers = [_server(name, entry, source, environ) for name, entry in table.items()]
    return [server for server in servers if server is not None]


def _server(name: str, entry: Any, source: str,
            environ: Mapping[str, str]) -> ServerConfig | None:
    """One entry, checked; None for a server switched off with ``"disabled": true``."""
    where = f"{source}: server {name!r}"
    if not _NAME.match(name) or "__" in name:
        raise ConfigError(f"{where}: a name is 1-48 letters, digits, '-' or '_' (no '__'), "
                          "since tools are offered as mcp__SERVER__TOOL")
    if not isinstance(entry, dict):
        raise ConfigError(f"{where}: expected an object")
    if entry.get("disabled") is True:
        return None
    unset: list[str] = []  # ${VAR}s with no value: said once, not left to fail silently

    def text(key: str) -> str | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise ConfigError(f"{where}: {key} must be a string")
        return expand(value, environ, unset)

    def strings(key: str) -> tuple[str, ...] | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{where}: {key} must be a list of strings")
        return tuple(expand(item, environ, unset) for item in value)

    def mapping(key: str) -> dict[str, str]:
        value = entry.get(key) or {}
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ConfigError(f"{where}: {key} must be an object of strings")
        return {str(k): expand(v, environ, unset) for k, v in value.items()}

    def seconds(key: str, default: float) -> float:
        value = entry.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{where}: {key} must be a positive number of seconds")
        return float(value)

    limit = entry.get("max_mcp_message", DEFAULT_MAX_MESSAGE)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise ConfigError(f"{where}: max_mcp_message must be a positive number of bytes")
    protocol = entry.get("protocol", "auto")
    if protocol not in ("auto", "legacy"):
        raise ConfigError(f"{where}: protocol must be \"auto\" or \"legacy\"")
    kind = entry.get("type")
    url = text("url")
    command = text("command")
    if kind in ("http", "streamable-http", "streamableHttp") or (kind is None and url):
        if not url or not url.startswith(("http://", "https://")):
            raise ConfigError(f"{where}: an http server needs a \"url\" starting with http(s)://")
        url = endpoint(url, f"{where}: url").url  # parsed as the request will be
        command = None
    elif kind in (None, "stdio"):
        if not command:
            raise ConfigError(f"{where}: needs a \"command\" (or \"type\": \"http\" and a \"url\")")
        url = None
    else:
        raise ConfigError(f"{where}: unsupported type {kind!r} (stdio or http)")
    args, env, headers = strings("args") or (), mapping("env"), mapping("headers")
    return ServerConfig(
        name=name, source=source, command=command, args=args,
        env=env, cwd=text("cwd"), url=url, headers=headers,
        include_tools=strings("includeTools"), exclude_tools=strings("excludeTools") or (),
        startup_timeout=seconds("startup_timeout", DEFAULT_STARTUP_TIMEOUT),
        tool_timeout=seconds("tool_timeout", DEFAULT_TOOL_TIMEOUT), max_mcp_message=limit,
        protocol=protocol, oauth=_oauth(entry.get("oauth"), where, environ),
        unset=tuple(dict.fromkeys(unset)),
    )


def _oauth(value: Any, where: str, environ: Mapping[str, str]) -> OAuthSettings:
    """The ``oauth`` object of an http server (``OAuthSettings``' keys), checked."""
    if value is None:
        return OAuthSettings()
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: oauth must be an object")
    unknown = sorted(set(value) - set(_OAUTH_KEYS))
    if unknown:
        raise ConfigError(f"{where}: oauth has no key {unknown[0]!r} ({', '.join(_OAUTH_KEYS)})")
    for key in _OAUTH_KEYS[:-1]:
        if value.get(key) is not None and not isinstance(value[key], str):
            raise ConfigError(f"{where}: oauth.{key} must be a string")
    scopes = value.get("scopes", [])
    if not isinstance(scopes, list) or not all(isinstance(item, str) for item in scopes):
        raise ConfigError(f"{where}: oauth.scopes must be a list of strings")
    secret_env, key_env = value.get("client_secret_env"), value.get("private_key_env")
    for key, what in _VARIABLE_KEYS:
        if value.get(key) is not None and not _VARIABLE_NAME.match(value[key]):
            raise ConfigError(f"{where}: oauth.{key} names an environment variable "
                              f"(letters, digits, '_'), not the {what}")
    if secret_env is not None and key_env is not None:
        raise ConfigError(f"{where}: oauth.client_secret_env and oauth.private_key_env "
                          "are two ways to log in: give one")
    client_id = value.get("client_id")
    for key in ("client_secret_env", "private_key_env"):
        if value.get(key) is not None and not client_id:
            raise ConfigError(f"{where}: oauth.{key} needs oauth.client_id")
    algorithm = value.get("signing_algorithm", "RS256")
    if algorithm not in SIGNING_ALGORITHMS:
        raise ConfigError(f"{where}: oauth.signing_algorithm {algorithm!r} is not one of "
                          f"{', '.join(SIGNING_ALGORITHMS)}")
    if "signing_algorithm" in value and key_env is None:
        raise ConfigError(f"{where}: oauth.signing_algorithm needs oauth.private_key_env")
    issuer = _credential_url(value, "issuer", where, environ)
    document = value.get("client_metadata_url")
    if document is not None:
        document = expand(document, environ)
        if not _document_url(document):
            raise ConfigError(f"{where}: oauth.client_metadata_url must be an https URL with "
                              "a path (the client metadata document)")
        if client_id:
            raise ConfigError(f"{where}: oauth.client_metadata_url and oauth.client_id are "
                              "two client IDs: give one")
    assertion = _assertion_keys(value, where, environ)
    return OAuthSettings(client_id=expand(client_id, environ) if client_id else None,
                         client_secret_env=secret_env, private_key_env=key_env,
                         signing_algorithm=algorithm, issuer=issuer,
                         client_metadata_url=document, **assertion,
                         scopes=tuple(expand(item, environ) for item in scopes))


def _credential_url(value: dict[str, Any], key: str, where: str,
                    environ: Mapping[str, str]) -> str | None:
    """``oauth.KEY``, a URL credentials are sent to: https, or http on this machine."""
    url = value.get(key)
    if url is None:
        return None
    url = expand(url, environ)
    parsed = parse_endpoint(url)
    if parsed is None or not parsed.keeps_secrets:  # the line quotes no value
        raise ConfigError(f"{where}: oauth.{key} must be an https URL (http only on "
                          "127.0.0.1 or localhost)")
    return url


def _assertion_keys(value: dict[str, Any], where: str,
                    environ: Mapping[str, str]) -> dict[str, str | None]:
    """The keys of a login by assertion (``assertion.py``), checked with the rest."""
    assertion, id_token = value.get("assertion_env"), value.get("id_token_env")
    if assertion is not None and id_token is not None:
        raise ConfigError(f"{where}: oauth.assertion_env and oauth.id_token_env are two ways "
                          "to log in: give one")
    for other in ("client_secret_env", "private_key_env", "client_metadata_url"):
        if assertion is not None and value.get(other) is not None:
            raise ConfigError(f"{where}: oauth.assertion_env and oauth.{other} are two ways "
                              "to log in: give one")
    for key in ("assertion_env", "id_token_env"):
        if value.get(key) is not None and value.get("issuer") is None:
            raise ConfigError(f"{where}: oauth.{key} needs oauth.issuer (the authorization "
                              "server the grant is for)")
    if id_token is not None:
        for needed in ("client_id", "client_secret_env", "idp_token_endpoint",
                       "idp_client_id"):
            if not value.get(needed):
                raise ConfigError(f"{where}: oauth.id_token_env needs oauth.{needed}")
    for key in ("idp_token_endpoint", "idp_client_id"):
        if value.get(key) is not None and id_token is None:
            raise ConfigError(f"{where}: oauth.{key} needs oauth.id_token_env")
    endpoint = _credential_url(value, "idp_token_endpoint", where, environ)
    idp_client = value.get("idp_client_id")
    return {"assertion_env": assertion, "id_token_env": id_token,
            "idp_token_endpoint": endpoint,
            "idp_client_id": expand(idp_client, environ) if idp_client else None}


def _document_url(url: str) -> bool:
    """What the SDK takes as a URL-based client ID: https, with a path beyond ``/``."""
    parsed = parse_endpoint(url)
    return parsed is not None and parsed.scheme == "https" and parsed.path not in ("", "/")
