import COpenSSL

/// Owns one `EVP_PKEY` and frees it exactly once. OpenSSL 3 keys are immutable once built and
/// every operation below makes its own context, so one key may serve many threads at once.
final class EVPKey: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }

    var bits: Int { Int(EVP_PKEY_get_bits(pointer)) }

    func isType(_ name: String) -> Bool { EVP_PKEY_is_a(pointer, name) == 1 }

    /// A big-number parameter (`n`, `e`, …) as unsigned big-endian bytes.
    func bigNumber(_ name: String) throws -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pointer, name, &number) == 1, let number else {
            throw CryptoError.openSSL("read key parameter \(name)")
        }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(number, $0.baseAddress) }
        return bytes
    }

    func utf8Parameter(_ name: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_utf8_string_param(pointer, name, &buffer, buffer.count, &length) == 1 else { return nil }
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Generates a key of `algorithm` ("RSA", "EC") with one parameter set by `configure`.
    static func generate(_ algorithm: String, configure: (OpaquePointer) -> Int32) throws -> EVPKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { throw CryptoError.openSSL("generate \(algorithm) key") }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, configure(context) > 0, EVP_PKEY_generate(context, &key) == 1, let key else {
            throw CryptoError.openSSL("generate \(algorithm) key")
        }
        return EVPKey(taking: key)
    }

    // MARK: PEM

    static func readPrivateKeyPEM(_ pem: String) throws -> EVPKey {
        try withBIO(reading: pem) { bio in
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw CryptoError.openSSL("read PEM private key") }
            return EVPKey(taking: key)
        }
    }

    static func readPublicKeyPEM(_ pem: String) throws -> EVPKey {
        try withBIO(reading: pem) { bio in
            guard let key = PEM_read_bio_PUBKEY(bio, nil, nil, nil) else { throw CryptoError.openSSL("read PEM public key") }
            return EVPKey(taking: key)
        }
    }

    /// PKCS#8 `BEGIN PRIVATE KEY`, unencrypted: the form Apple's `.p8` files have.
    func privateKeyPEM() throws -> String {
        try Self.writingBIO { bio in PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 }
    }

    /// SubjectPublicKeyInfo `BEGIN PUBLIC KEY`.
    func publicKeyPEM() throws -> String {
        try Self.writingBIO { bio in PEM_write_bio_PUBKEY(bio, pointer) == 1 }
    }

    static func withBIO<R>(reading text: String, _ body: (OpaquePointer) throws -> R) throws -> R {
        var bytes = Array(text.utf8)
        return try bytes.withUnsafeMutableBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { throw CryptoError.openSSL("BIO_new_mem_buf") }
            defer { BIO_free(bio) }
            return try body(bio)
        }
    }

    static func writingBIO(_ write: (OpaquePointer) -> Bool) throws -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.openSSL("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) else { throw CryptoError.openSSL("write PEM") }
        var data: UnsafeMutablePointer<CChar>?
        let length = siwa_bio_get_mem_data(bio, &data)
        guard length > 0, let data else { throw CryptoError("write PEM", reason: "empty output") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }

    // MARK: Signatures

    /// `EVP_DigestSign` with SHA-256: PKCS#1 v1.5 for RSA, DER ECDSA for EC.
    func signSHA256(_ message: some Collection<UInt8>) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.openSSL("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, Digests.sha256, nil, pointer) == 1 else { throw CryptoError.openSSL("sign") }
        return try withContiguousBytes(message) { input in
            let data = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
            var length = 0
            guard EVP_DigestSign(context, nil, &length, data, input.count) == 1 else { throw CryptoError.openSSL("sign") }
            var signature = [UInt8](repeating: 0, count: length)
            guard signature.withUnsafeMutableBufferPointer({ EVP_DigestSign(context, $0.baseAddress, &length, data, input.count) }) == 1 else {
                throw CryptoError.openSSL("sign")
            }
            signature.removeSubrange(length...)
            return signature
        }
    }

    /// True only for a valid signature; any malformed input is simply false.
    func verifySHA256(signature: [UInt8], message: some Collection<UInt8>) -> Bool {
        guard let context = EVP_MD_CTX_new() else { return false }
        defer {
            EVP_MD_CTX_free(context)
            // A bad signature leaves reasons on the queue; they must not surface elsewhere.
            ERR_clear_error()
        }
        guard EVP_DigestVerifyInit(context, nil, Digests.sha256, nil, pointer) == 1 else { return false }
        return withContiguousBytes(message) { input in
            signature.withUnsafeBufferPointer { sig in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, input.baseAddress?.assumingMemoryBound(to: UInt8.self), input.count) == 1
            }
        }
    }
}
