import Foundation
import JSON
import TestSupport

/// An independent check of the access tokens: Python's `joserfc` and `cryptography` fetch the
/// JWKS over HTTP, verify a token against it and validate its claims, and confirm that tampered
/// copies fail. Nothing of the server's own JOSE code is involved.
enum AccessTokenVerifier {
    struct Unexpected: Error, CustomStringConvertible {
        let description: String
    }

    struct Verified {
        let header: JSONObject
        let claims: JSONObject
        /// The JWKS's `Cache-Control` and its kids, each checked to be the key's RFC 7638 thumbprint.
        let cacheControl: String
        let kids: [String]
        /// Each way of tampering that was tried, and whether it was refused.
        let tamperedRefused: [String: Bool]
    }

    static let script = #"""
    import base64, json, sys, urllib.request
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
    from joserfc import jwt
    from joserfc.jwk import KeySet

    jwks_url, token, expected = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    with urllib.request.urlopen(jwks_url, timeout=10) as response:
        cache_control = response.headers["Cache-Control"]
        document = json.load(response)
    for jwk in document["keys"]:
        assert set(jwk) == {"kty", "crv", "x", "y", "alg", "use", "kid"}, jwk
        assert (jwk["kty"], jwk["crv"], jwk["alg"], jwk["use"]) == ("EC", "P-256", "ES256", "sig"), jwk
    keys = KeySet.import_key_set(document)
    for key in keys:
        assert key.kid == key.thumbprint(), "kid is not the RFC 7638 thumbprint"

    def b64(part):
        return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))

    def verifies(value):
        # joserfc, then cryptography on its own: the raw R || S against the JWK's point.
        try:
            jwt.decode(value, keys, algorithms=["ES256"])
        except Exception:
            return False
        head, body, signature = value.split(".")
        kid = json.loads(b64(head))["kid"]
        jwk = next(k for k in document["keys"] if k["kid"] == kid)
        point = ec.EllipticCurvePublicNumbers(
            int.from_bytes(b64(jwk["x"]), "big"), int.from_bytes(b64(jwk["y"]), "big"), ec.SECP256R1()).public_key()
        raw = b64(signature)
        assert len(raw) == 64, "ES256 signatures are 64 raw bytes"
        der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
        try:
            point.verify(der, (head + "." + body).encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return False
        return True

    assert verifies(token), "the token does not verify"
    decoded = jwt.decode(token, keys, algorithms=["ES256"])
    registry = jwt.JWTClaimsRegistry(
        now=expected["now"],
        iss={"essential": True, "value": expected["iss"]}, aud={"essential": True, "value": expected["aud"]},
        sub={"essential": True}, exp={"essential": True}, iat={"essential": True}, jti={"essential": True},
        sid={"essential": True})
    registry.validate(decoded.claims)

    head, body, signature = token.split(".")
    def reencoded(part, change):
        value = json.loads(b64(part))
        change(value)
        return base64.urlsafe_b64encode(json.dumps(value, separators=(",", ":")).encode()).rstrip(b"=").decode()
    flipped = signature[:10] + ("A" if signature[10] != "A" else "B") + signature[11:]
    tampered = {
        "claims": reencoded(head, lambda h: None) + "." + reencoded(body, lambda c: c.update(sub="usr_someone_else")) + "." + signature,
        "signature": head + "." + body + "." + flipped,
        "typ": reencoded(head, lambda h: h.update(typ="JWT")) + "." + body + "." + signature,
        "kid": reencoded(head, lambda h: h.update(kid="unknown")) + "." + body + "." + signature,
        "alg none": reencoded(head, lambda h: h.update(alg="none")) + "." + body + ".",
    }
    print(json.dumps({
        "header": decoded.header, "claims": decoded.claims, "cache_control": cache_control,
        "kids": [k["kid"] for k in document["keys"]],
        "tampered_refused": {name: not verifies(value) for name, value in tampered.items()},
    }))
    """#

    /// Verifies `token` against the JWKS at `port`, expecting `iss` and `aud`, at `now`.
    static func verify(_ token: String, port: UInt16, iss: String, aud: String, now: Int64) async throws -> Verified {
        let expected = JSONWriter.string(.object(JSONObject([("iss", .string(iss)), ("aud", .string(aud)), ("now", .integer(now))])))
        let output = try await PythonTools.run(script, ["http://127.0.0.1:\(port)/.well-known/jwks.json", token, expected])
        guard let root = try JSONParser.parse(Array(output.utf8)).object, let header = root["header"]?.object,
              let claims = root["claims"]?.object, let refused = root["tampered_refused"]?.object
        else { throw Unexpected(description: "unexpected output: \(output)") }
        return Verified(
            header: header, claims: claims, cacheControl: root["cache_control"]?.string ?? "",
            kids: root["kids"]?.array?.compactMap(\.string) ?? [],
            tamperedRefused: Dictionary(uniqueKeysWithValues: refused.map { ($0.key, $0.value.bool ?? false) }))
    }
}
