"""DPoP (RFC 9449, SEP-1932): a login's key pair, the proofs it signs, the nonces servers ask for.

A DPoP-bound token is useless without its key, so the key is kept (a private JWK) in the
login's entry of ``mcp-tokens.json`` beside the tokens, and only there: ``DpopKey``'s repr
names its thumbprint, never its private half. A proof is a fresh JWT per request (``jti``),
signed with the key and naming the request's method and URI without query or fragment
(``htm``, ``htu``), the access token's hash on a resource request (``ath``) and the last
nonce the request's server (by origin) handed out (``DPoP-Nonce``). Imported only by the
OAuth provider of ``auth``, for a server that needs a login.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from dsh_cli.core.limits import DPOP_NONCE_CHARACTERS as MAX_NONCE

if TYPE_CHECKING:
    import httpx2

__all__ = ["ALGORITHMS", "DpopKey", "Nonces", "Proofs", "as_bearer", "ath", "choose_algorithm",
           "htu", "nonce_challenge", "offered", "origin"]

# what dsh signs with, best first: ES256 is what SEP-1932 asks every party to support
ALGORITHMS: dict[str, ec.EllipticCurve] = {
    "ES256": ec.SECP256R1(), "ES384": ec.SECP384R1(), "ES512": ec.SECP521R1()}
CURVES = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}  # a JWK's crv: its algorithm
NONCE_HEADER = "DPoP-Nonce"
USE_NONCE = "use_dpop_nonce"
# a DPoP challenge (perhaps one of several) whose error is use_dpop_nonce
CHALLENGE = re.compile(r'(?i)(?:^|,)\s*DPoP\s(?:[^,]*,)*?\s*error="?use_dpop_nonce\b')


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def choose_algorithm(offered: Iterable[str] | None) -> str | None:
    """The algorithm to sign with among those the authorization server offers; None: none
    dsh signs with (or no DPoP offered), so tokens stay Bearer."""
    names = set(offered or ())
    return next((name for name in ALGORITHMS if name in names), None)


def offered(metadata: httpx2.Response) -> list[str]:
    """The ``dpop_signing_alg_values_supported`` of an authorization server's metadata."""
    try:
        document = json.loads(metadata.content)
    except (ValueError, UnicodeDecodeError):
        return []
    values = document.get("dpop_signing_alg_values_supported") if isinstance(
        document, dict) else None
    return [value for value in values if isinstance(value, str)] if isinstance(
        values, list) else []


def htu(url: str | httpx2.URL) -> str:
    """The proof's ``htu``: the request's URI without query, fragment or user info."""
    import httpx2

    return str(httpx2.URL(str(url)).copy_with(query=None, fragment=None, userinfo=b""))


def origin(url: str | httpx2.URL) -> str:
    """Whose nonce a request carries: scheme, host and port."""
    import httpx2

    parsed = httpx2.URL(str(url))
    return f"{parsed.scheme}://{parsed.netloc.decode('ascii')}"


def ath(access_token: str) -> str:
    """The proof's ``ath``: base64url SHA-256 of the access token (RFC 9449 4.2)."""
    return _b64(hashlib.sha256(access_token.encode("ascii")).digest())


class DpopKey:
    """One login's key pair (elliptic curve), stored as its private JWK."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey, algorithm: str) -> None:
        self._private = private_key
        self.algorithm = algorithm

    @classmethod
    def generate(cls, algorithm: str = "ES256") -> DpopKey:
        return cls(ec.generate_private_key(ALGORITHMS[algorithm]), algorithm)

    @classmethod
    def from_jwk(cls, value: object) -> DpopKey | None:
        """The key a login stored; None for anything that is not one (a hand-edited file)."""
        if not isinstance(value, dict) or value.get("crv") not in CURVES or "d" not in value:
            return None
        try:
            key = ECAlgorithm.from_jwk(json.dumps(value))
        except (jwt.InvalidKeyError, ValueError, TypeError):
            return None
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            return None
        return cls(key, CURVES[value["crv"]])

    def to_jwk(self) -> dict[str, Any]:
        """The private JWK, for the login's entry of the token file and nowhere else."""
        return ECAlgorithm.to_jwk(self._private, as_dict=True)

    def public_jwk(self) -> dict[str, str]:
        """What every proof's header carries: the public half only."""
        whole = ECAlgorithm.to_jwk(self._private.public_key(), as_dict=True)
        return {name: whole[name] for name in ("kty", "crv", "x", "y")}

    def thumbprint(self) -> str:
        """RFC 7638's SHA-256 thumbprint: what a bound token's ``cnf.jkt`` names."""
        canonical = json.dumps(self.public_jwk(), sort_keys=True, separators=(",", ":"))
        return _b64(hashlib.sha256(canonical.encode("ascii")).digest())

    def proof(self, method: str, url: str | httpx2.URL, *, access_token: str | None = None,
              nonce: str | None = None) -> str:
        """A new proof for one request (its own ``jti``)."""
        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(16), "htm": method.upper(),
                                  "htu": htu(url), "iat": int(time.time())}
        if access_token is not None:
            claims["ath"] = ath(access_token)
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._private, algorithm=self.algorithm,
                          headers={"typ": "dpop+jwt", "jwk": self.public_jwk()})

    def __repr__(self) -> str:
        return f"DpopKey({self.algorithm}, {self.thumbprint()})"


class Nonces:
    """The last ``DPoP-Nonce`` each server (by origin) gave: RFC 9449 8 and 9."""

    def __init__(self) -> None:
        self._by_origin: dict[str, str] = {}

    def for_url(self, url: str | httpx2.URL) -> str | None:
        return self._by_origin.get(origin(url))

    def remember(self, response: httpx2.Response) -> bool:
        """Keep the nonce ``response`` gives; whether it is one not kept before."""
        nonce = response.headers.get(NONCE_HEADER, "").strip()
        if not nonce or len(nonce) > MAX_NONCE or not nonce.isascii():
            return False
        where = origin(response.request.url)
        if self._by_origin.get(where) == nonce:
            return False
        self._by_origin[where] = nonce
        return True


class Proofs:
    """What a login's requests carry: a proof signed with its key, with the server's nonce."""

    def __init__(self, key: DpopKey, nonces: Nonces) -> None:
        self.key = key
        self.nonces = nonces

    def sign(self, request: httpx2.Request) -> None:
        """Set ``request``'s ``DPoP`` header to a new proof; a request presenting a DPoP
        token (``Authorization: DPoP``) gets that token's ``ath``."""
        scheme, _, token = request.headers.get("Authorization", "").partition(" ")
        request.headers["DPoP"] = self.key.proof(
            request.method, request.url, access_token=token.strip() if scheme.lower() == "dpop"
            else None, nonce=self.nonces.for_url(request.url))


def nonce_challenge(response: httpx2.Response) -> bool:
    """Whether ``response`` asks for the request again with its nonce: the token endpoint's
    400 ``use_dpop_nonce`` (RFC 9449 8) or a resource's 401 ``DPoP error="use_dpop_nonce"``
    (9)."""
    if NONCE_HEADER not in response.headers:
        return False
    if response.status_code == 401:
        challenge = response.headers.get("WWW-Authenticate", "")
        return CHALLENGE.search(challenge) is not None
    if response.status_code != 400:
        return False
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return False
    return isinstance(body, dict) and body.get("error") == USE_NONCE


def as_bearer(response: httpx2.Response) -> httpx2.Response | None:
    """A token response of ``token_type`` DPoP as the SDK's model (which knows only Bearer)
    reads it, its other fields as they came; None: not a DPoP-bound token."""
    import httpx2

    if response.status_code not in (200, 201):
        return None
    try:
        body = json.loads(response.content)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(body, dict) or str(body.get("token_type", "")).lower() != "dpop":
        return None
    return httpx2.Response(response.status_code, headers=response.headers,
                           content=json.dumps({**body, "token_type": "Bearer"}).encode(),
                           request=response.request)
