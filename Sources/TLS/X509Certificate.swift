import COpenSSL

/// Owns one `X509` and frees it exactly once.
final class X509Certificate {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Every certificate in PEM text, in order; other PEM blocks are refused.
    static func readAll(pem: String) throws(TLSError) -> [X509Certificate] {
        try MemoryBIO.reading(pem) { bio throws(TLSError) in
            var certificates: [X509Certificate] = []
            while let certificate = PEM_read_bio_X509(bio, nil, nil, nil) {
                certificates.append(X509Certificate(taking: certificate))
            }
            // The loop ends on the first failure: at the end of the text that is "no start
            // line", which is expected; anything else is a damaged certificate.
            let last = ERR_peek_last_error()
            if last != 0, ERR_GET_LIB(last) != ERR_LIB_PEM || ERR_GET_REASON(last) != PEM_R_NO_START_LINE {
                throw .openSSL("read PEM certificate")
            }
            ERR_clear_error()
            return certificates
        }
    }

    func pem() throws(TLSError) -> String {
        try MemoryBIO.writing { bio in PEM_write_bio_X509(bio, pointer) == 1 }
    }
}

/// Owns one private `EVP_PKEY` read from PEM and frees it exactly once.
final class PEMPrivateKey {
    let pointer: OpaquePointer

    init(pem: String) throws(TLSError) {
        pointer = try MemoryBIO.reading(pem) { bio throws(TLSError) in
            guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { throw .openSSL("read PEM private key") }
            return key
        }
    }

    deinit { EVP_PKEY_free(pointer) }
}

/// In-memory BIOs for PEM text.
enum MemoryBIO {
    static func reading<R>(_ text: String, _ body: (OpaquePointer) throws(TLSError) -> R) throws(TLSError) -> R {
        let bytes = Array(text.utf8)
        // withUnsafeBytes does not carry a typed error through, so the outcome travels as a Result.
        let outcome: Result<R, TLSError> = bytes.withUnsafeBytes { buffer in
            guard let bio = BIO_new_mem_buf(buffer.baseAddress, Int32(buffer.count)) else { return .failure(.openSSL("BIO_new_mem_buf")) }
            defer { BIO_free(bio) }
            do throws(TLSError) {
                return .success(try body(bio))
            } catch {
                return .failure(error)
            }
        }
        return try outcome.get()
    }

    static func writing(_ write: (OpaquePointer) -> Bool) throws(TLSError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("BIO_new") }
        defer { BIO_free(bio) }
        guard write(bio) else { throw .openSSL("write PEM") }
        var data: UnsafeMutablePointer<CChar>?
        let length = siwa_bio_get_mem_data(bio, &data)
        guard length > 0, let data else { throw .setup("write PEM: empty output") }
        return String(decoding: UnsafeRawBufferPointer(start: data, count: length), as: UTF8.self)
    }
}
