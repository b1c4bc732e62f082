import COpenSSL

/// An RSA public key, as Apple publishes them in its JWKS (`n`, `e`), for RS256 verification.
public struct RSAPublicKey: Sendable {
    let key: EVPKey
    private let verifier: DigestVerifier

    /// Builds the key from the modulus and exponent (unsigned big-endian bytes). Refuses
    /// moduli under 2048 bits: nothing Apple signs with is smaller, and smaller is forgeable.
    public init(modulus: [UInt8], exponent: [UInt8]) throws {
        guard !modulus.isEmpty, !exponent.isEmpty, exponent.count <= 8 else {
            throw CryptoError("RSA public key", reason: "empty or oversized parameter")
        }
        guard let builder = OSSL_PARAM_BLD_new() else { throw CryptoError.openSSL("RSA public key") }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer {
            BN_free(n)
            BN_free(e)
        }
        guard let n, let e else { throw CryptoError.openSSL("RSA public key") }
        // The builder keeps the key-name pointers until `to_param`, so they must be static
        // strings, not Swift's temporary bridged ones.
        guard OSSL_PARAM_BLD_push_BN(builder, Self.cString("n"), n) == 1,
              OSSL_PARAM_BLD_push_BN(builder, Self.cString("e"), e) == 1,
              let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { throw CryptoError.openSSL("RSA public key") }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw CryptoError.openSSL("RSA public key") }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &pkey, siwa_evp_pkey_public_key_selection(), parameters) == 1, let pkey
        else { throw CryptoError.openSSL("RSA public key") }
        key = EVPKey(taking: pkey)
        verifier = DigestVerifier(key: key)
        guard key.bits >= 2048 else { throw CryptoError("RSA public key", reason: "modulus of \(key.bits) bits is under 2048") }
    }

    init(key: EVPKey) {
        self.key = key
        verifier = DigestVerifier(key: key)
    }

    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    public var bits: Int { key.bits }

    /// RSASSA-PKCS1-v1_5 with SHA-256 (JWS `RS256`).
    @inlinable
    public func verifyRS256(signature: [UInt8], message: some Collection<UInt8>) -> Bool {
        signature.withUnsafeBufferPointer { signature in
            if let valid = message.withContiguousStorageIfAvailable({ verifyRS256(signature: signature, message: $0) }) { return valid }
            return Array(message).withUnsafeBufferPointer { verifyRS256(signature: signature, message: $0) }
        }
    }

    /// The same over borrowed bytes: the digest stays on the stack, and nothing generic runs
    /// for the token verified on every sign-in.
    public func verifyRS256(signature: UnsafeBufferPointer<UInt8>, message: UnsafeBufferPointer<UInt8>) -> Bool {
        withUnsafeTemporaryAllocation(byteCount: SHA256.byteCount, alignment: 1) { digest in
            SHA256.hash(UnsafeRawBufferPointer(message), into: digest)
            return verifier.verify(signature: UnsafeRawBufferPointer(signature), digest: UnsafeRawBufferPointer(digest))
        }
    }

    /// SubjectPublicKeyInfo PEM.
    public func pem() throws -> String { try key.publicKeyPEM() }

    public var modulus: [UInt8] { (try? key.bigNumber("n")) ?? [] }
    public var exponent: [UInt8] { (try? key.bigNumber("e")) ?? [] }
}

/// An RSA private key: the simulator signs identity tokens with it, as Apple does.
public struct RSAPrivateKey: Sendable {
    let key: EVPKey

    public static func generate(bits: Int = 2048) throws -> RSAPrivateKey {
        RSAPrivateKey(key: try EVPKey.generate("RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, Int32(bits)) })
    }

    public init(pem: String) throws {
        key = try EVPKey.readPrivateKeyPEM(pem)
        guard key.isType("RSA") else { throw CryptoError("RSA private key", reason: "not an RSA key") }
    }

    init(key: EVPKey) { self.key = key }

    public func signRS256(_ message: some Collection<UInt8>) throws -> [UInt8] {
        try key.signSHA256(message)
    }

    public var publicKey: RSAPublicKey { RSAPublicKey(key: key) }

    public func pem() throws -> String { try key.privateKeyPEM() }
}
