import COpenSSL

/// Server-side TLS settings from a certificate chain and its private key (the Apple ID
/// simulator and tests).
public final class TLSServerContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// - Parameters:
    ///   - certificateChainPEM: the leaf certificate first, then any intermediates.
    ///   - privateKeyPEM: the leaf's private key.
    public init(certificateChainPEM: String, privateKeyPEM: String) throws(TLSError) {
        ERR_clear_error()
        OpenSSLProcessSetup.ignoreSIGPIPE()
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw .openSSL("SSL_CTX_new") }
        pointer = context
        guard siwa_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else { throw .openSSL("set minimum TLS version") }
        SSL_CTX_set_options(context, siwa_ssl_op_no_renegotiation())
        // Nothing resumes sessions here; tickets would only be bytes for clients to skip.
        SSL_CTX_set_num_tickets(context, 0)

        let chain = try X509Certificate.readAll(pem: certificateChainPEM)
        guard let leaf = chain.first else { throw .setup("no certificate in the chain PEM") }
        guard SSL_CTX_use_certificate(context, leaf.pointer) == 1 else { throw .openSSL("use certificate") }
        for intermediate in chain.dropFirst() {
            // add0 takes ownership, so hand it a reference of its own.
            X509_up_ref(intermediate.pointer)
            guard siwa_ssl_ctx_add0_chain_cert(context, intermediate.pointer) == 1 else {
                X509_free(intermediate.pointer)
                throw .openSSL("add chain certificate")
            }
        }
        let key = try PEMPrivateKey(pem: privateKeyPEM)
        guard SSL_CTX_use_PrivateKey(context, key.pointer) == 1 else { throw .openSSL("use private key") }
        guard SSL_CTX_check_private_key(context) == 1 else { throw .openSSL("private key does not match the certificate") }
    }

    public convenience init(_ issued: IssuedCertificate) throws(TLSError) {
        try self.init(certificateChainPEM: issued.chainPEM, privateKeyPEM: issued.privateKeyPEM)
    }

    deinit { SSL_CTX_free(pointer) }

    /// A server connection on the accepted socket `fd` (which the caller keeps owning).
    public func makeConnection(fd: Int32) throws(TLSError) -> TLSConnection {
        ERR_clear_error()
        guard let ssl = SSL_new(pointer) else { throw .openSSL("SSL_new") }
        let connection = TLSConnection(taking: ssl, fd: fd)
        guard SSL_set_fd(ssl, fd) == 1 else { throw .openSSL("SSL_set_fd") }
        SSL_set_accept_state(ssl)
        return connection
    }
}
