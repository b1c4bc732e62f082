import COpenSSL

/// Comparisons of secrets whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes, compared by OpenSSL's `CRYPTO_memcmp` without an
    /// early exit. Inputs of different lengths are unequal at once: compare digests (or values
    /// of a public, fixed length) when the length itself is secret.
    public static func equals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return withContiguousBytes(a) { x in
            withContiguousBytes(b) { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 }
        }
    }

    /// The same for two strings' UTF-8, without the generic path's calls through the
    /// collections' witnesses (a nonce is compared for every identity token verified).
    public static func equals(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        guard a.utf8.count == b.utf8.count else { return false }
        return a.withUTF8 { x in
            b.withUTF8 { y in x.isEmpty || CRYPTO_memcmp(x.baseAddress, y.baseAddress, x.count) == 0 }
        }
    }
}
