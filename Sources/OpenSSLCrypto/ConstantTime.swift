import COpenSSL

/// Comparisons of secrets whose timing reveals nothing of where they differ.
public enum ConstantTime {
    /// Equal lengths compared by OpenSSL's `CRYPTO_memcmp`; a length difference returns at once
    /// (compare digests when the length itself is secret).
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let a = Array(a), b = Array(b)
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 } }
    }
}
