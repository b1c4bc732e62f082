import COpenSSL

/// HMAC-SHA256 (RFC 2104) through OpenSSL's EVP_MAC: the web pages' CSRF tokens, and tests.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], message: some Collection<UInt8>) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: SHA256.byteCount)
        var length = 0
        let done = withContiguousBytes(message) { bytes in
            key.withUnsafeBytes { keyBytes in
                output.withUnsafeMutableBufferPointer { out in
                    EVP_Q_mac(
                        nil, "HMAC", nil, "SHA256", nil, keyBytes.baseAddress, keyBytes.count,
                        bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count, out.baseAddress, out.count, &length)
                }
            }
        }
        precondition(done != nil && length == SHA256.byteCount, "HMAC-SHA256 failed")
        return output
    }
}
