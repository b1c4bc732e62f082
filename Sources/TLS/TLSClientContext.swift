import COpenSSL
import Glibc

/// Client-side TLS settings shared by every connection to a server: TLS 1.2 or newer, the
/// peer's chain verified against the system's trust store plus any extra CAs (`apple_ca_file`),
/// and the host name checked on every connection.
///
/// An `SSL_CTX` is safe to share once configured (OpenSSL locks its internal caches), so one
/// context serves every worker thread.
public final class TLSClientContext: @unchecked Sendable {
    let pointer: OpaquePointer

    /// - Parameters:
    ///   - extraCAPEM: PEM text with one or more CA certificates to trust as well.
    ///   - extraCAFile: a PEM file of CA certificates to trust as well.
    ///   - trustOnlyExtraCAs: trust nothing but the extra CAs (tests: a throwaway CA must not
    ///     be rescued, or masked, by the system store).
    public init(extraCAPEM: String? = nil, extraCAFile: String? = nil, trustOnlyExtraCAs: Bool = false) throws(TLSError) {
        ERR_clear_error()
        OpenSSLProcessSetup.ignoreSIGPIPE()
        guard let context = SSL_CTX_new(TLS_client_method()) else { throw .openSSL("SSL_CTX_new") }
        pointer = context
        // From here on, deinit frees the context if a later step throws.
        guard siwa_ssl_ctx_set_min_proto_version(context, TLS1_2_VERSION) == 1 else { throw .openSSL("set minimum TLS version") }
        // A server's unclean close is reported as end of input: every response we accept is
        // framed by Content-Length or chunking, so a truncation is caught there.
        SSL_CTX_set_options(context, siwa_ssl_op_ignore_unexpected_eof() | siwa_ssl_op_no_renegotiation())
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)

        // Trusting only extra CAs when none are given trusts nothing: every peer is refused.
        if !trustOnlyExtraCAs {
            if extraCAFile == nil, extraCAPEM == nil {
                SSL_CTX_set1_cert_store(context, try SystemTrustStore.shared.get().pointer)
            } else {
                // The extra CAs go into this context's own store, never into the shared one.
                guard SSL_CTX_set_default_verify_paths(context) == 1 else { throw .openSSL("load the system trust store") }
            }
        }
        if let extraCAFile {
            guard SSL_CTX_load_verify_file(context, extraCAFile) == 1 else { throw .openSSL("load CA file \(extraCAFile)") }
        }
        if let extraCAPEM {
            let certificates = try X509Certificate.readAll(pem: extraCAPEM)
            guard !certificates.isEmpty else { throw .setup("no certificate in the extra CA PEM") }
            let store = SSL_CTX_get_cert_store(context)
            for certificate in certificates {
                guard X509_STORE_add_cert(store, certificate.pointer) == 1 else { throw .openSSL("add extra CA") }
            }
        }
    }

    deinit { SSL_CTX_free(pointer) }

    /// A client connection on the connected socket `fd` (which the caller keeps owning) to
    /// `hostName`: a DNS name or an IP literal, checked against the certificate and sent as
    /// SNI when it is a name (RFC 6066 §3 forbids IP literals there).
    public func makeConnection(fd: Int32, hostName: String) throws(TLSError) -> TLSConnection {
        ERR_clear_error()
        guard let ssl = SSL_new(pointer) else { throw .openSSL("SSL_new") }
        let connection = TLSConnection(taking: ssl, fd: fd)
        guard SSL_set_fd(ssl, fd) == 1 else { throw .openSSL("SSL_set_fd") }
        SSL_set_connect_state(ssl)
        let parameters = SSL_get0_param(ssl)
        // Names come from subjectAltName only: without this flag OpenSSL falls back to the
        // subject's CN when a certificate has no DNS names, and took `CN=localhost` for a name
        // (RFC 6125 §6.4.4; every public CA puts the names in the SAN).
        // Wildcards match one whole label only (`*.example.com`, never `a*.example.com`).
        SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT | X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
        if IPAddressText.isLiteral(hostName) {
            guard X509_VERIFY_PARAM_set1_ip_asc(parameters, hostName) == 1 else { throw .openSSL("set expected IP address") }
        } else {
            guard SSL_set1_host(ssl, hostName) == 1 else { throw .openSSL("set expected host name") }
            guard siwa_ssl_set_sni(ssl, hostName) == 1 else { throw .openSSL("set SNI") }
        }
        return connection
    }
}

/// The system's trust store, read once per process and shared by every context that trusts it
/// alone: reading the CA bundle costs about 15 ms of CPU, and every `HTTPClient` made one.
/// An `X509_STORE` is reference-counted and locks its own caches, so contexts may share it.
final class SystemTrustStore: @unchecked Sendable {
    let pointer: OpaquePointer

    static let shared = Result<SystemTrustStore, TLSError> { () throws(TLSError) in try SystemTrustStore() }

    private init() throws(TLSError) {
        guard let store = X509_STORE_new() else { throw .openSSL("X509_STORE_new") }
        guard X509_STORE_set_default_paths(store) == 1 else {
            X509_STORE_free(store)
            throw .openSSL("load the system trust store")
        }
        pointer = store
    }
}

/// Whether text is an IPv4 or IPv6 address literal.
enum IPAddressText {
    static func isLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}

/// Process-wide settings OpenSSL's socket I/O needs.
enum OpenSSLProcessSetup {
    /// OpenSSL's socket BIO writes with write(2), which raises SIGPIPE (killing the process) when
    /// the peer has reset the connection; the error is reported through EPIPE instead.
    static func ignoreSIGPIPE() {
        signal(SIGPIPE, SIG_IGN)
    }
}
