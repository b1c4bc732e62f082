import Foundation
import Testing
import COpenSSL
import TestSupport
@testable import OpenSSLCrypto

/// base64url without padding, for test vectors (the JOSE module has the product's codec).
func base64URL(_ text: String) -> [UInt8] {
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    while base64.count % 4 != 0 { base64 += "=" }
    return [UInt8](Data(base64Encoded: base64)!)
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

@Suite struct RS256Tests {
    // RFC 7515 Appendix A.2: the RS256 example JWS and its public key.
    static let signingInput = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    static let signature = base64URL(
        "cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw")
    static let modulus = base64URL(
        "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ")
    static let exponent = base64URL("AQAB")

    @Test func theRFC7515ExampleVerifies() throws {
        let key = try RSAPublicKey(modulus: Self.modulus, exponent: Self.exponent)
        #expect(key.bits == 2048)
        #expect(key.verifyRS256(signature: Self.signature, message: Array(Self.signingInput.utf8)))
    }

    @Test func oneFlippedBitInTheSignatureOrTheMessageFails() throws {
        let key = try RSAPublicKey(modulus: Self.modulus, exponent: Self.exponent)
        for position in [0, 100, 255] {
            var signature = Self.signature
            signature[position] ^= 0x01
            #expect(!key.verifyRS256(signature: signature, message: Array(Self.signingInput.utf8)))
        }
        var message = Array(Self.signingInput.utf8)
        message[10] ^= 0x01
        #expect(!key.verifyRS256(signature: Self.signature, message: message))
        #expect(!key.verifyRS256(signature: [], message: Array(Self.signingInput.utf8)))
        #expect(!key.verifyRS256(signature: Array(Self.signature.prefix(128)), message: Array(Self.signingInput.utf8)))
    }

    /// The borrowed-bytes form (what token verification calls) answers as the array form does.
    @Test func borrowedBytesVerifyAlike() throws {
        let key = try RSAPublicKey(modulus: Self.modulus, exponent: Self.exponent)
        let message = Array(Self.signingInput.utf8)
        func verify(_ signature: [UInt8], _ message: [UInt8]) -> Bool {
            signature.withUnsafeBufferPointer { signature in message.withUnsafeBufferPointer { key.verifyRS256(signature: signature, message: $0) } }
        }
        #expect(verify(Self.signature, message))
        #expect(key.verifyRS256(signature: Self.signature, message: message.lazy.map { $0 }))
        var flipped = message
        flipped[10] ^= 0x01
        #expect(!verify(Self.signature, flipped))
        #expect(!verify([], message))
        #expect(!verify(Self.signature, []))
        #expect(!verify(Array(Self.signature.prefix(128)), message))
    }

    @Test func generatedKeysSignAndVerifyAndRoundTripThroughPEM() throws {
        let key = try RSAPrivateKey.generate()
        let message = Array("header.payload".utf8)
        let signature = try key.signRS256(message)
        #expect(signature.count == 256)
        #expect(key.publicKey.verifyRS256(signature: signature, message: message))
        let reloaded = try RSAPrivateKey(pem: try key.pem())
        #expect(reloaded.publicKey.modulus == key.publicKey.modulus)
        let rebuilt = try RSAPublicKey(modulus: key.publicKey.modulus, exponent: key.publicKey.exponent)
        #expect(rebuilt.verifyRS256(signature: signature, message: message))
        #expect(key.publicKey.exponent == [1, 0, 1])
    }

    @Test func moduliUnder2048BitsAreRefused() throws {
        let small = try RSAPrivateKey.generate(bits: 1024)
        #expect(throws: CryptoError.self) {
            try RSAPublicKey(modulus: small.publicKey.modulus, exponent: small.publicKey.exponent)
        }
        #expect(throws: CryptoError.self) { try RSAPublicKey(modulus: [], exponent: [1, 0, 1]) }
    }
}

@Suite struct ES256Tests {
    @Test func signaturesAreRaw64BytesAndVerify() throws {
        let key = try P256PrivateKey.generate()
        // Hundreds of signatures: some R or S values are under 32 bytes and must be padded.
        for index in 0..<300 {
            let message = Array("client-secret-\(index)".utf8)
            let signature = try key.signES256(message)
            #expect(signature.count == 64)
            #expect(key.publicKey.verifyES256(signature: signature, message: message))
        }
    }

    @Test func derTamperedAndForeignSignaturesAreRefused() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("payload".utf8)
        let raw = try key.signES256(message)
        let der = try ECDSASignature.der(fromRaw: raw)
        #expect(der.first == 0x30)
        #expect(!key.publicKey.verifyES256(signature: der, message: message))
        var tampered = raw
        tampered[40] ^= 0x80
        #expect(!key.publicKey.verifyES256(signature: tampered, message: message))
        let other = try P256PrivateKey.generate()
        #expect(!other.publicKey.verifyES256(signature: raw, message: message))
        #expect(try ECDSASignature.raw(fromDER: der) == raw)
    }

    @Test func keysRoundTripThroughPKCS8AndSPKI() throws {
        let key = try P256PrivateKey.generate()
        let pem = try key.pem()
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let reloaded = try P256PrivateKey(pem: pem)
        let signature = try reloaded.signES256(Array("x".utf8))
        let publicKey = try P256PublicKey(pem: try key.publicKey.pem())
        #expect(publicKey.verifyES256(signature: signature, message: Array("x".utf8)))
    }

    /// A JWK's `x` and `y` are the point of the SPKI (`04 || x || y`, its last 65 bytes), each
    /// always 32 bytes: among hundreds of keys some coordinates start with a zero byte.
    @Test func coordinatesAreTheFullWidthPointOfTheSPKI() throws {
        var padded = 0
        // 1,500 keys: the chance that none has a leading zero is about 1e-5.
        for _ in 0..<1_500 {
            let key = try P256PrivateKey.generate().publicKey
            let (x, y) = try key.coordinates()
            #expect(x.count == 32 && y.count == 32)
            let base64 = try key.pem().split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            let spki = [UInt8](try #require(Data(base64Encoded: base64)))
            #expect(Array(spki.suffix(65)) == [0x04] + x + y)
            if x[0] == 0 || y[0] == 0 { padded += 1 }
        }
        #expect(padded > 0, "no coordinate with a leading zero byte was seen: the padding went untested")
    }

    @Test func onlyPKCS8P256KeysAreAccepted() throws {
        let rsa = try TestSigningKeys.one().pem()
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: rsa) }
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: "-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----") }
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: "-----BEGIN PRIVATE KEY-----\nnot base64!\n-----END PRIVATE KEY-----") }
        let p384 = try EVPKey.generate("EC") { EVP_PKEY_CTX_set_group_name($0, "secp384r1") }
        #expect(throws: CryptoError.self) { try P256PrivateKey(pem: try p384.privateKeyPEM()) }
    }

    /// An independent implementation (Python's `cryptography`, installed by .ci/run) accepts
    /// our signatures: proof that they are what JWS and Apple expect, not just self-consistent.
    @Test func pythonCryptographyVerifiesOurSignatures() async throws {
        let key = try P256PrivateKey.generate()
        let message = "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ.eyJpc3MiOiJERUYxMjNHSElKIn0"
        let signature = try key.signES256(Array(message.utf8))
        let script = """
            import sys, base64
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
            public = serialization.load_pem_public_key(sys.argv[1].encode())
            raw = bytes.fromhex(sys.argv[3])
            assert len(raw) == 64
            der = encode_dss_signature(int.from_bytes(raw[:32], 'big'), int.from_bytes(raw[32:], 'big'))
            public.verify(der, sys.argv[2].encode(), ec.ECDSA(hashes.SHA256()))
            print("verified")
            """
        let python = try ChildProcess(
            executable: "/usr/bin/env", arguments: ["python3", "-c", script, try key.publicKey.pem(), message, hex(signature)],
            environment: ProcessInfo.processInfo.environment)
        let termination = await python.wait(seconds: 60)
        let text = python.stdoutText + python.stderrText
        #expect(termination == .exited(0), "\(text)")
        #expect(text.contains("verified"))
    }
}

@Suite struct AESGCMTests {
    @Test func sealsAndOpens() throws {
        let box = try AESGCM(key: SecureRandom.bytes(32))
        let plaintext = Array("r9b2.0.rsqx.P0q-refresh-token".utf8)
        let sealed = try box.seal(plaintext, associatedData: Array("user:42".utf8))
        #expect(sealed.count == 12 + plaintext.count + 16)
        #expect(try box.open(sealed, associatedData: Array("user:42".utf8)) == plaintext)
        #expect(try box.seal(plaintext) != box.seal(plaintext))
        #expect(try box.open(try box.seal([])) == [])
    }

    @Test func tamperingOtherRowsAndOtherKeysAreRefused() throws {
        let box = try AESGCM(key: SecureRandom.bytes(32))
        let sealed = try box.seal(Array("secret".utf8), associatedData: Array("user:1".utf8))
        #expect(throws: CryptoError.self) { try box.open(sealed, associatedData: Array("user:2".utf8)) }
        var flipped = sealed
        flipped[14] ^= 1
        #expect(throws: CryptoError.self) { try box.open(flipped, associatedData: Array("user:1".utf8)) }
        #expect(throws: CryptoError.self) { try box.open(Array(sealed.prefix(20)), associatedData: Array("user:1".utf8)) }
        let other = try AESGCM(key: SecureRandom.bytes(32))
        #expect(throws: CryptoError.self) { try other.open(sealed, associatedData: Array("user:1".utf8)) }
        #expect(throws: CryptoError.self) { try AESGCM(key: [1, 2, 3]) }
    }
}

@Suite struct DigestAndRandomTests {
    @Test func sha256KnownAnswers() {
        #expect(hex(SHA256.hash("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(hex(SHA256.hash("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// The in-place form reuses one context per thread: consecutive digests on many threads
    /// must not bleed into each other.
    @Test func inPlaceDigestsAgreeAcrossThreads() async {
        let inputs = (0..<64).map { index in [UInt8](repeating: UInt8(index), count: index * 7) }
        await withTaskGroup(of: Bool.self) { group in
            for input in inputs {
                group.addTask {
                    var digest = [UInt8](repeating: 0, count: 32)
                    for _ in 0..<50 {
                        input.withUnsafeBytes { bytes in digest.withUnsafeMutableBytes { SHA256.hash(bytes, into: $0) } }
                    }
                    return digest == SHA256.hash(input)
                }
            }
            for await agreed in group { #expect(agreed) }
        }
        var digest = [UInt8](repeating: 0, count: 32)
        Array("abc".utf8).withUnsafeBytes { bytes in digest.withUnsafeMutableBytes { SHA256.hash(bytes, into: $0) } }
        #expect(hex(digest) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func randomBytesDiffer() {
        let first = SecureRandom.bytes(32)
        #expect(first.count == 32)
        #expect(first != SecureRandom.bytes(32))
        #expect(SecureRandom.bytes(0).isEmpty)
    }
}

@Suite struct HMACSHA256Tests {
    /// RFC 4231 test cases 1 and 2.
    @Test func knownAnswers() {
        #expect(hex(HMACSHA256.mac(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8)))
            == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(hex(HMACSHA256.mac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
            == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.mac(key: [1], message: []) != HMACSHA256.mac(key: [2], message: []))
    }
}

@Suite struct ConstantTimeTests {
    @Test func equalBytesAreEqualAndAnyDifferenceIsNot() {
        let secret = Array("admin-0123456789abcdefghijklmnopqrstuv".utf8)
        #expect(ConstantTime.equals(secret, secret))
        #expect(ConstantTime.equals([UInt8](), [UInt8]()))
        for index in secret.indices {
            var other = secret
            other[index] ^= 0x80
            #expect(!ConstantTime.equals(secret, other))
        }
        #expect(!ConstantTime.equals(secret, secret.dropLast()))
        #expect(!ConstantTime.equals(secret, secret + [0]))
        // Any collection of bytes: a String's UTF-8 view, an ArraySlice.
        #expect(ConstantTime.equals("café".utf8, Array("café".utf8)[...]))
    }

    /// Strings compare by their UTF-8 bytes, as the generic form does on their views: not by
    /// Swift's canonical equivalence, under which a precomposed é equals e and a combining accent.
    @Test func stringsCompareByTheirBytes() {
        #expect(ConstantTime.equals("raw-nonce", "raw-nonce"))
        #expect(ConstantTime.equals("", ""))
        #expect(!ConstantTime.equals("raw-nonce", "raw-nonc3"))
        #expect(!ConstantTime.equals("raw-nonce", "raw-nonce "))
        #expect(!ConstantTime.equals("", "x"))
        #expect(ConstantTime.equals("a long string that is stored out of line", "a long string that is stored out of line"))
        let precomposed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(precomposed == decomposed && !ConstantTime.equals(precomposed, decomposed))
        // Equal to `==` and of one length, so the bytes themselves are compared.
        let dotsAboveBelow = "\u{1E0B}\u{323}", dotsBelowAbove = "\u{1E0D}\u{307}"
        #expect(dotsAboveBelow == dotsBelowAbove && dotsAboveBelow.utf8.count == dotsBelowAbove.utf8.count)
        #expect(!ConstantTime.equals(dotsAboveBelow, dotsBelowAbove))
    }
}

@Suite struct ScryptTests {
    // RFC 7914 §12, the second and third test vectors.
    @Test func theRFC7914VectorsDerive() throws {
        let nacl = try Scrypt.derive(password: Array("password".utf8), salt: Array("NaCl".utf8), logN: 10, r: 8, p: 16, length: 64)
        #expect(hex(nacl) == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b3731622eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640")
        let sodium = try Scrypt.derive(
            password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8), logN: 14, r: 8, p: 1, length: 64)
        #expect(hex(sodium) == "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887")
    }

    @Test func parametersOutOfRangeAreRefused() {
        #expect(throws: CryptoError.self) { try Scrypt.derive(password: [1], salt: [2], logN: 0, r: 8, p: 1, length: 32) }
        #expect(throws: CryptoError.self) { try Scrypt.derive(password: [1], salt: [2], logN: 10, r: 0, p: 1, length: 32) }
        #expect(throws: CryptoError.self) { try Scrypt.derive(password: [1], salt: [2], logN: 10, r: 8, p: 1, length: 0) }
    }
}
