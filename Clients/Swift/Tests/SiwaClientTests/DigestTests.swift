import Foundation
import Testing

@testable import SiwaClient

/// The client's own SHA-256 (no CryptoKit on Linux), against published vectors.
@Suite struct DigestTests {
    @Test func sha256MatchesFIPS180Vectors() {
        #expect(SHA256.hex(Array("".utf8)) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SHA256.hex([UInt8](repeating: 0x61, count: 1_000_000)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func pkceChallengeMatchesRFC7636AppendixB() {
        #expect(ReturnToAppSignIn.challenge(for: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk") == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
    }

    @Test func anAppleNonceIsHashedAsAppleSampleCodeDoes() {
        #expect(AppleNonce(raw: "abc").hashed == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let fresh = AppleNonce()
        #expect(fresh.raw.count == 43)
        #expect(fresh != AppleNonce())
    }

    @Test func theLoginURLCarriesTheReturnAndTheChallenge() throws {
        let signIn = ReturnToAppSignIn(
            baseURL: URL(string: "https://auth.example.com/")!, returnTo: URL(string: "com.example.app:/done?a=1+2")!,
            verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        let components = try #require(URLComponents(url: signIn.url, resolvingAgainstBaseURL: false))
        #expect(components.path == "/auth/apple/login")
        #expect(components.queryItems?.first { $0.name == "return_to" }?.value == "com.example.app:/done?a=1+2")
        #expect(components.percentEncodedQuery?.contains("%2B") == true)
        #expect(components.queryItems?.first { $0.name == "code_challenge" }?.value == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(signIn.code(in: URL(string: "com.example.app:/done?code=xyz")!) == "xyz")
        #expect(signIn.code(in: URL(string: "https://evil.example/done?code=xyz")!) == nil)
    }
}
