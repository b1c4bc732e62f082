import JSON
import OpenSSLCrypto
import Testing
import WireFormat
@testable import JOSE

/// RFC 9068 access tokens as minted (the app-level tests verify them with Python's joserfc).
@Suite struct AccessTokenMinterTests {
    static func part(_ token: String, _ index: Int) throws -> [UInt8] {
        try #require(Base64.url.decode(token.split(separator: ".", omittingEmptySubsequences: false).map(String.init)[index]))
    }

    @Test func theHeaderIsRFC9068sAndTheSignatureIsRawES256OverTheFirstTwoParts() throws {
        let key = try P256PrivateKey.generate()
        let minter = AccessTokenMinter(kid: "kid-1", key: key)
        let claims = JSONObject([("sub", .string("usr_1")), ("exp", .integer(1_800_000_300))])
        let token = try minter.mint(claims)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        #expect(parts.count == 3)
        #expect(String(decoding: try Self.part(token, 0), as: UTF8.self) == #"{"alg":"ES256","typ":"at+jwt","kid":"kid-1"}"#)
        #expect(try JSONParser.parse(try Self.part(token, 1)) == .object(claims))
        let signature = try Self.part(token, 2)
        #expect(signature.count == 64)
        let input = Array(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        #expect(key.publicKey.verifyES256(signature: signature, message: input))
        #expect(!(try P256PrivateKey.generate()).publicKey.verifyES256(signature: signature, message: input))
        // The token parses as any other compact JWS.
        let jws = try CompactJWS(token)
        #expect(jws.algorithm == "ES256" && jws.keyID == "kid-1" && jws.header["typ"]?.string == "at+jwt")
    }

    /// RFC 7638 §3: the thumbprint of RFC 7515 A.3's P-256 key (the value joserfc computes).
    @Test func theKidIsTheRFC7638Thumbprint() throws {
        let jwk = P256JSONWebKey(x: "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", y: "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0")
        #expect(jwk.thumbprint == "oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U")
        #expect(JSONWriter.string(jwk.json(kid: jwk.thumbprint)) == #"{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","alg":"ES256","use":"sig","kid":"oKIywvGUpTVTyxMQ3bwIIeQUudfr_CkLMjCE19ECD-U"}"#)
        // From a generated key: coordinates of 32 bytes, as the JWKS must carry them.
        let generated = try P256JSONWebKey(try P256PrivateKey.generate().publicKey)
        #expect(Base64.url.decode(generated.x)?.count == 32 && Base64.url.decode(generated.y)?.count == 32)
    }
}
