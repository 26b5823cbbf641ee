"""Which API key may go to which endpoint: a vendor's key goes to that vendor only.

``DEEPSEEK_API_KEY`` is sent only to DeepSeek's endpoint and ``OPENAI_API_KEY`` only to
OpenAI's; ``DSH_API_KEY`` (and the variable ``api_key_env`` names in ``config.toml``) is
the user's key for whatever endpoint dsh is pointed at. With no base URL given, a model
OpenAI names (``gpt-4o-mini``, ``o3``) goes to OpenAI and every other to DeepSeek, the
default. A URL is read by ``core.urls`` (the parser of the client that sends the key).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from dsh_cli.core.urls import parse_endpoint, where

__all__ = ["ANY_ENDPOINT", "DEEPSEEK", "OPENAI", "VENDORS", "KeyChoice", "Vendor", "choose_key",
           "default_base_url", "vendor_at"]

ANY_ENDPOINT = "DSH_API_KEY"  # the user's key for the endpoint dsh is pointed at


@dataclass(frozen=True)
class Vendor:
    """An API vendor: its name, its key variable, the host its key may go to."""

    name: str
    variable: str
    host: str
    base_url: str


DEEPSEEK = Vendor("DeepSeek", "DEEPSEEK_API_KEY", "api.deepseek.com", "https://api.deepseek.com")
OPENAI = Vendor("OpenAI", "OPENAI_API_KEY", "api.openai.com", "https://api.openai.com/v1")
VENDORS = (DEEPSEEK, OPENAI)
# model names OpenAI serves; anything else (deepseek-chat, a local model) is not its
_OPENAI_MODELS = ("gpt-", "chatgpt-", "o1", "o3", "o4", "codex-", "text-", "davinci", "babbage")


def default_base_url(model: str) -> str:
    """The endpoint of the vendor that serves ``model`` when no base URL is given."""
    return OPENAI.base_url if model.lower().startswith(_OPENAI_MODELS) else DEEPSEEK.base_url


def vendor_at(base_url: str) -> Vendor | None:
    """The vendor whose own endpoint ``base_url`` is (https and its exact host), else None."""
    parsed = parse_endpoint(base_url)
    if parsed is None or parsed.scheme != "https":
        return None
    host = parsed.host.rstrip(".")
    return next((vendor for vendor in VENDORS if vendor.host == host), None)


@dataclass(frozen=True)
class KeyChoice:
    """The variable whose key goes to the endpoint (None: none may), and what could be set."""

    variable: str | None
    usable: tuple[str, ...]  # the variables that may carry a key there, in the order read
    withheld: tuple[str, ...]  # vendor keys that are set but belong to another endpoint
    host: str

    def advice(self) -> str:
        """What to set, in words, for a message: a vendor's key says where it alone goes."""
        vendor = next((vendor for vendor in VENDORS if vendor.variable in self.usable), None)
        named = [name for name in self.usable if vendor is None or name != vendor.variable]
        wanted = " or ".join(named)
        if vendor is not None:
            wanted = f"{vendor.variable} (sent only to {vendor.host}), or {wanted}"
        elif named == [ANY_ENDPOINT]:
            wanted += " (or name a variable with api_key_env in config.toml)"
        withheld = "".join(f"; {name} is set, but it is sent only to {_host_of(name)}"
                           for name in self.withheld)
        return wanted + withheld


def _host_of(variable: str) -> str:
    return next(vendor.host for vendor in VENDORS if vendor.variable == variable)


def choose_key(base_url: str, environ: Mapping[str, str],
               named: str | None = None) -> KeyChoice:
    """Which variable's key may go to ``base_url``: ``DSH_API_KEY``, then ``named`` (the
    config's ``api_key_env``), then the key of the vendor whose endpoint it is."""
    vendor = vendor_at(base_url)
    usable = [ANY_ENDPOINT]
    if named and named not in usable:
        usable.append(named)
    if vendor is not None and vendor.variable not in usable:
        usable.append(vendor.variable)
    chosen = next((name for name in usable if environ.get(name)), None)
    withheld = tuple(other.variable for other in VENDORS
                     if other.variable not in usable and environ.get(other.variable))
    return KeyChoice(chosen, tuple(usable), withheld, where(base_url))
