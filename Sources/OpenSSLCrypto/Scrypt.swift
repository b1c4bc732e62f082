import COpenSSL

/// scrypt (RFC 7914) through OpenSSL 3's `EVP_KDF` "SCRYPT": the memory-hard function that
/// password hashes are made with. It needs `128 · r · N` bytes of memory while it runs (32 MiB
/// for N = 2^15, r = 8), so callers bound how many run at once.
public enum Scrypt {
    /// Derives `length` bytes from `password` and `salt` with cost `N = 2^logN`, block size `r`
    /// and parallelism `p`. Throws for parameters OpenSSL refuses.
    public static func derive(password: some Collection<UInt8>, salt: [UInt8], logN: Int, r: Int, p: Int, length: Int) throws -> [UInt8] {
        guard (1...31).contains(logN), r > 0, p > 0, length > 0, r <= Int(UInt32.max), p <= Int(UInt32.max) else {
            throw CryptoError("scrypt", reason: "parameters out of range")
        }
        guard let context = EVP_KDF_CTX_new(kdf) else { throw CryptoError.openSSL("scrypt: EVP_KDF_CTX_new") }
        defer { EVP_KDF_CTX_free(context) }
        var n = UInt64(1) << UInt64(logN)
        var blockSize = UInt32(r)
        var parallelism = UInt32(p)
        // OpenSSL's default ceiling (1 GiB) is far above what we use; the exact need plus the
        // small block buffers, so a parameter mistake cannot ask for more.
        var maxMemory = UInt64(128) * UInt64(r) * (n + UInt64(p) + 2)
        var output = [UInt8](repeating: 0, count: length)
        var passwordBytes = Array(password)
        var saltBytes = salt
        defer { passwordBytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, $0.count) } }
        let derived = passwordBytes.withUnsafeMutableBytes { passwordBuffer in
            saltBytes.withUnsafeMutableBytes { saltBuffer in
                output.withUnsafeMutableBufferPointer { out in
                    // OSSL_PARAM keeps the key pointers: they must outlive the call, so static C strings.
                    var parameters = [
                        OSSL_PARAM_construct_octet_string(Key.password, passwordBuffer.baseAddress, passwordBuffer.count),
                        OSSL_PARAM_construct_octet_string(Key.salt, saltBuffer.baseAddress, saltBuffer.count),
                        OSSL_PARAM_construct_uint64(Key.n, &n),
                        OSSL_PARAM_construct_uint32(Key.r, &blockSize),
                        OSSL_PARAM_construct_uint32(Key.p, &parallelism),
                        OSSL_PARAM_construct_uint64(Key.maxMemory, &maxMemory),
                        OSSL_PARAM_construct_end(),
                    ]
                    return EVP_KDF_derive(context, out.baseAddress, out.count, &parameters)
                }
            }
        }
        guard derived == 1 else { throw CryptoError.openSSL("scrypt: EVP_KDF_derive") }
        return output
    }

    /// Fetched once: the provider lookup is not free, and a fetched KDF may be shared by threads.
    nonisolated(unsafe) private static let kdf: OpaquePointer = {
        guard let kdf = EVP_KDF_fetch(nil, "SCRYPT", nil) else { fatalError("OpenSSL has no SCRYPT KDF") }
        return kdf
    }()

    /// The parameter names of `core_names.h`, as C strings that live as long as the process.
    private enum Key {
        static var password: UnsafePointer<CChar> { cString("pass") }
        static var salt: UnsafePointer<CChar> { cString("salt") }
        static var n: UnsafePointer<CChar> { cString("n") }
        static var r: UnsafePointer<CChar> { cString("r") }
        static var p: UnsafePointer<CChar> { cString("p") }
        static var maxMemory: UnsafePointer<CChar> { cString("maxmem_bytes") }

        private static func cString(_ literal: StaticString) -> UnsafePointer<CChar> {
            UnsafeRawPointer(literal.utf8Start).assumingMemoryBound(to: CChar.self)
        }
    }
}
