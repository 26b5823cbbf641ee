"""DPoP proofs (RFC 9449): what each proof claims, verified with the public key it carries."""

from __future__ import annotations

import asyncio
import json
import time

import httpx2
import jwt
import pytest

from dsh_cli.mcp_client.auth import dpop
from dsh_cli.mcp_client.auth.tokens import StoredLogin, tokens_file

# RFC 9449 section 7.1's example: an access token and the ath its proofs carry
RFC_TOKEN = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
RFC_ATH = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"


def verified(proof: str) -> tuple[dict, dict]:
    """The proof's header and claims, its signature checked against its own ``jwk``."""
    header = jwt.get_unverified_header(proof)
    key = jwt.PyJWK(header["jwk"], algorithm=header["alg"])
    return header, jwt.decode(proof, key.key, algorithms=[header["alg"]])


def test_a_proof_is_a_dpop_jwt_signed_by_the_public_key_it_carries():
    key = dpop.DpopKey.generate()
    header, claims = verified(key.proof("post", "http://127.0.0.1:8000/token"))
    assert (header["typ"], header["alg"]) == ("dpop+jwt", "ES256")
    assert set(header["jwk"]) == {"kty", "crv", "x", "y"}  # never the private "d"
    assert (claims["htm"], claims["htu"]) == ("POST", "http://127.0.0.1:8000/token")
    assert abs(claims["iat"] - time.time()) < 5
    assert "ath" not in claims and "nonce" not in claims


def test_htu_drops_query_fragment_and_user_info():
    key = dpop.DpopKey.generate()
    _, claims = verified(key.proof("GET", "HTTP://me:pw@Example.COM:443/a/mcp?x=1#frag"))
    assert claims["htu"] == "http://example.com:443/a/mcp"
    assert dpop.htu("https://example.com:443/mcp?session=1") == "https://example.com/mcp"


def test_ath_is_the_base64url_sha256_of_the_access_token():
    assert dpop.ath(RFC_TOKEN) == RFC_ATH
    _, claims = verified(dpop.DpopKey.generate().proof("POST", "https://rs.example/mcp",
                                                       access_token=RFC_TOKEN))
    assert claims["ath"] == RFC_ATH


def test_every_proof_has_a_fresh_jti():
    key = dpop.DpopKey.generate()
    jtis = {verified(key.proof("POST", "https://rs.example/mcp"))[1]["jti"] for _ in range(50)}
    assert len(jtis) == 50


def test_the_key_survives_its_jwk_and_its_repr_shows_no_private_part():
    key = dpop.DpopKey.generate("ES384")
    stored = json.loads(json.dumps(key.to_jwk()))  # as the token file holds it
    again = dpop.DpopKey.from_jwk(stored)
    assert again is not None and again.algorithm == "ES384"
    assert again.public_jwk() == key.public_jwk()
    header, _ = verified(again.proof("POST", "https://as.example/token"))
    assert header["alg"] == "ES384"
    assert stored["d"] not in repr(key) and key.thumbprint() in repr(key)


@pytest.mark.parametrize("value", [None, "pem", {}, {"kty": "EC", "crv": "P-256"},
                                   {**dpop.DpopKey.generate().public_jwk()},
                                   {**dpop.DpopKey.generate().to_jwk(), "d": "AAAA"},
                                   {"kty": "OKP", "crv": "Ed25519", "x": "a", "d": "b"}])
def test_a_stored_key_that_is_not_one_is_none(value):
    assert dpop.DpopKey.from_jwk(value) is None


def test_es256_is_chosen_where_offered_and_nothing_dsh_cannot_sign_with():
    assert dpop.choose_algorithm(["RS256", "ES512", "ES256"]) == "ES256"
    assert dpop.choose_algorithm(["ES512"]) == "ES512"
    assert dpop.choose_algorithm(["RS256", "none"]) is None
    assert dpop.choose_algorithm([]) is None and dpop.choose_algorithm(None) is None


def answer(status: int, url: str, headers: dict[str, str] | None = None,
           body: object = None) -> httpx2.Response:
    return httpx2.Response(status, headers=headers, json=body,
                           request=httpx2.Request("POST", url))


def test_a_signed_request_carries_its_tokens_ath_and_its_origins_nonce_only():
    nonces = dpop.Nonces()
    proofs = dpop.Proofs(dpop.DpopKey.generate(), nonces)
    assert nonces.remember(answer(200, "http://127.0.0.1:9/token", {"DPoP-Nonce": "n1"}))
    assert not nonces.remember(answer(200, "http://127.0.0.1:9/x", {"DPoP-Nonce": "n1"}))
    token_request = httpx2.Request("POST", "http://127.0.0.1:9/token?x=1")
    proofs.sign(token_request)
    _, claims = verified(token_request.headers["DPoP"])
    assert claims["nonce"] == "n1" and "ath" not in claims
    resource = httpx2.Request("POST", "http://127.0.0.1:10/mcp",
                              headers={"Authorization": f"DPoP {RFC_TOKEN}"})
    proofs.sign(resource)
    _, claims = verified(resource.headers["DPoP"])
    assert claims["ath"] == RFC_ATH and "nonce" not in claims  # another origin's nonce
    bearer = httpx2.Request("POST", "http://127.0.0.1:10/mcp",
                            headers={"Authorization": "Bearer abc"})
    proofs.sign(bearer)
    assert "ath" not in verified(bearer.headers["DPoP"])[1]


def test_nonce_challenges_of_the_token_endpoint_and_the_resource():
    nonce = {"DPoP-Nonce": "n"}
    assert dpop.nonce_challenge(answer(400, "http://a/token", nonce, {"error": "use_dpop_nonce"}))
    assert not dpop.nonce_challenge(answer(400, "http://a/token", None,
                                           {"error": "use_dpop_nonce"}))
    assert not dpop.nonce_challenge(answer(400, "http://a/token", nonce,
                                           {"error": "invalid_grant"}))
    for challenge, expected in (('DPoP error="use_dpop_nonce", resource_metadata="x"', True),
                                ('Bearer realm="r", DPoP error="use_dpop_nonce"', True),
                                ('Bearer error="use_dpop_nonce"', False),
                                ('DPoP resource_metadata="x"', False)):
        response = answer(401, "http://a/mcp", {**nonce, "WWW-Authenticate": challenge})
        assert dpop.nonce_challenge(response) is expected, challenge


def test_a_dpop_token_response_reads_as_the_sdks_bearer_and_is_stored_as_dpop(tmp_path):
    body = {"access_token": "t", "token_type": "DPoP", "expires_in": 60}
    view = dpop.as_bearer(answer(200, "http://a/token", body=body))
    assert view is not None and json.loads(view.content) == {**body, "token_type": "Bearer"}
    assert dpop.as_bearer(answer(200, "http://a/token", body={**body, "token_type": "Bearer"})
                          ) is None
    assert dpop.as_bearer(answer(400, "http://a/token", body=body)) is None
    storage = StoredLogin(tokens_file(tmp_path), "http://a/mcp")
    storage.file.update(storage.resource, {"tokens": {**body, "token_type": "dpop"}})
    stored = asyncio.run(storage.get_tokens())
    assert stored is not None and stored.token_type == "DPoP"


def test_offered_algorithms_of_the_metadata():
    metadata = {"issuer": "http://a", "dpop_signing_alg_values_supported": ["ES256", 3]}
    assert dpop.offered(answer(200, "http://a/.well-known/x", body=metadata)) == ["ES256"]
    assert dpop.offered(answer(200, "http://a/.well-known/x", body={"issuer": "x"})) == []
    assert dpop.offered(answer(200, "http://a/.well-known/x", body=[1])) == []
