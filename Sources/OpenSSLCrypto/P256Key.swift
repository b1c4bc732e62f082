import COpenSSL

/// The Sign in with Apple private key: PKCS#8 PEM wrapping an EC P-256 key (Apple's `.p8`).
/// It signs the ES256 client secret.
public struct P256PrivateKey: Sendable {
    let key: EVPKey

    /// Accepts only an unencrypted PKCS#8 PEM (`BEGIN PRIVATE KEY`) on the P-256 curve.
    public init(pem: String) throws {
        guard pem.contains("-----BEGIN PRIVATE KEY-----") else {
            throw CryptoError("P-256 private key", reason: "not a PKCS#8 PEM (expected -----BEGIN PRIVATE KEY-----)")
        }
        let key = try EVPKey.readPrivateKeyPEM(pem)
        guard key.isType("EC"), let curve = key.utf8Parameter("group"), curve == "prime256v1" || curve == "P-256" else {
            throw CryptoError("P-256 private key", reason: "not an EC key on the P-256 curve")
        }
        self.key = key
    }

    public static func generate() throws -> P256PrivateKey {
        P256PrivateKey(key: try EVPKey.generate("EC") { EVP_PKEY_CTX_set_group_name($0, "prime256v1") })
    }

    init(key: EVPKey) { self.key = key }

    /// ES256 as JWS wants it (RFC 7518 §3.4): raw `R || S`, each 32 bytes big-endian and
    /// left-padded with zeros. OpenSSL produces DER, which Apple refuses (`invalid_client`).
    public func signES256(_ message: some Collection<UInt8>) throws -> [UInt8] {
        let der = try key.signSHA256(message)
        return try ECDSASignature.raw(fromDER: der)
    }

    public var publicKey: P256PublicKey { P256PublicKey(key: key) }

    public func pem() throws -> String { try key.privateKeyPEM() }
}

public struct P256PublicKey: Sendable {
    let key: EVPKey

    public init(pem: String) throws {
        let key = try EVPKey.readPublicKeyPEM(pem)
        guard key.isType("EC"), let curve = key.utf8Parameter("group"), curve == "prime256v1" || curve == "P-256" else {
            throw CryptoError("P-256 public key", reason: "not an EC key on the P-256 curve")
        }
        self.key = key
    }

    init(key: EVPKey) { self.key = key }

    /// Verifies a raw 64-byte `R || S` signature. Any other length — a DER signature included —
    /// is refused, as Apple refuses it.
    public func verifyES256(signature: [UInt8], message: some Collection<UInt8>) -> Bool {
        guard signature.count == 64, let der = try? ECDSASignature.der(fromRaw: signature) else { return false }
        return key.verifySHA256(signature: der, message: message)
    }

    public func pem() throws -> String { try key.publicKeyPEM() }

    /// The public point's affine coordinates, each 32 bytes big-endian and left-padded with
    /// zeros: a JWK's `x` and `y` (RFC 7518 §6.2.1.2 requires the full width).
    public func coordinates() throws -> (x: [UInt8], y: [UInt8]) {
        (try Self.fullWidth(key.bigNumber("qx")), try Self.fullWidth(key.bigNumber("qy")))
    }

    private static func fullWidth(_ bytes: [UInt8]) throws -> [UInt8] {
        guard bytes.count <= 32 else { throw CryptoError("P-256 public key", reason: "coordinate over 32 bytes") }
        return [UInt8](repeating: 0, count: 32 - bytes.count) + bytes
    }
}

/// Conversions between ECDSA's DER form and JWS's fixed-width raw form.
enum ECDSASignature {
    static func raw(fromDER der: [UInt8]) throws -> [UInt8] {
        var cursor: UnsafePointer<UInt8>? = nil
        return try der.withUnsafeBufferPointer { buffer in
            cursor = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &cursor, buffer.count) else { throw CryptoError.openSSL("decode ECDSA signature") }
            defer { ECDSA_SIG_free(signature) }
            var r: OpaquePointer?
            var s: OpaquePointer?
            ECDSA_SIG_get0(signature, &r, &s)
            var raw = [UInt8](repeating: 0, count: 64)
            let written = raw.withUnsafeMutableBufferPointer { out in
                (BN_bn2binpad(r, out.baseAddress, 32), BN_bn2binpad(s, out.baseAddress! + 32, 32))
            }
            guard written.0 == 32, written.1 == 32 else { throw CryptoError("encode ECDSA signature", reason: "component over 32 bytes") }
            return raw
        }
    }

    static func der(fromRaw raw: [UInt8]) throws -> [UInt8] {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { throw CryptoError("encode ECDSA signature", reason: "expected 64 bytes") }
        defer { ECDSA_SIG_free(signature) }
        let r = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, 32, nil) }
        let s = raw.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        guard let r, let s, ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            throw CryptoError.openSSL("encode ECDSA signature")
        }
        var output: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &output)
        guard length > 0, let output else { throw CryptoError.openSSL("encode ECDSA signature") }
        defer { siwa_openssl_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}
