import COpenSSL

/// AES-256-GCM for Apple tokens at rest. The sealed form is `nonce (12) || ciphertext ||
/// tag (16)`; the associated data binds a ciphertext to the row it belongs to, so a value
/// copied into another row does not decrypt.
public struct AESGCM: Sendable {
    public static let keyBytes = 32
    static let nonceBytes = 12
    static let tagBytes = 16

    private let key: [UInt8]

    public init(key: [UInt8]) throws {
        guard key.count == Self.keyBytes else { throw CryptoError("AES-256-GCM", reason: "key must be 32 bytes") }
        self.key = key
    }

    public func seal(_ plaintext: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        let nonce = SecureRandom.bytes(Self.nonceBytes)
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("seal") }
        defer { EVP_CIPHER_CTX_free(context) }
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count + 16)
        var tag = [UInt8](repeating: 0, count: Self.tagBytes)
        var length: Int32 = 0
        var total: Int32 = 0
        guard EVP_EncryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              associatedData.isEmpty || EVP_EncryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1,
              ciphertext.withUnsafeMutableBufferPointer({ EVP_EncryptUpdate(context, $0.baseAddress, &length, plaintext, Int32(plaintext.count)) }) == 1
        else { throw CryptoError.openSSL("seal") }
        total = length
        guard ciphertext.withUnsafeMutableBufferPointer({ EVP_EncryptFinal_ex(context, $0.baseAddress! + Int(total), &length) }) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(Self.tagBytes), &tag) == 1
        else { throw CryptoError.openSSL("seal") }
        total += length
        return nonce + ciphertext.prefix(Int(total)) + tag
    }

    /// The plaintext, or an error when the data was altered, truncated, sealed under another
    /// key, or bound to other associated data.
    public func open(_ sealed: [UInt8], associatedData: [UInt8] = []) throws -> [UInt8] {
        guard sealed.count >= Self.nonceBytes + Self.tagBytes else { throw CryptoError("open", reason: "sealed data too short") }
        let nonce = Array(sealed.prefix(Self.nonceBytes))
        var tag = Array(sealed.suffix(Self.tagBytes))
        let ciphertext = Array(sealed[Self.nonceBytes..<(sealed.count - Self.tagBytes)])
        guard let context = EVP_CIPHER_CTX_new() else { throw CryptoError.openSSL("open") }
        defer {
            EVP_CIPHER_CTX_free(context)
            ERR_clear_error()
        }
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count + 16)
        var length: Int32 = 0
        guard EVP_DecryptInit_ex(context, EVP_aes_256_gcm(), nil, key, nonce) == 1,
              associatedData.isEmpty || EVP_DecryptUpdate(context, nil, &length, associatedData, Int32(associatedData.count)) == 1,
              plaintext.withUnsafeMutableBufferPointer({ EVP_DecryptUpdate(context, $0.baseAddress, &length, ciphertext, Int32(ciphertext.count)) }) == 1,
              EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, Int32(Self.tagBytes), &tag) == 1
        else { throw CryptoError("open", reason: "decryption failed") }
        let total = length
        guard plaintext.withUnsafeMutableBufferPointer({ EVP_DecryptFinal_ex(context, $0.baseAddress! + Int(total), &length) }) == 1 else {
            throw CryptoError("open", reason: "authentication failed")
        }
        return Array(plaintext.prefix(Int(total + length)))
    }
}
