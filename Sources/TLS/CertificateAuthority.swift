import COpenSSL
import Glibc
import OpenSSLCrypto

/// A throwaway certificate authority (EC P-256, self-signed) that issues server certificates,
/// so tests and `apple-sim --tls` can serve real, verifiable TLS without a public CA.
public struct CertificateAuthority: Sendable {
    public let certificatePEM: String
    /// The CA's key. Keep it with the certificate only as long as new leaves are needed.
    public let privateKeyPEM: String

    /// Generates a new CA valid for `validityDays`.
    public init(commonName: String = "siwa-server throwaway CA", validityDays: Int = 365) throws(TLSError) {
        let keyPEM = try Self.generateKeyPEM()
        let key = try PEMPrivateKey(pem: keyPEM)
        let certificate = try Self.build(
            subject: commonName, publicKey: key.pointer, issuer: nil, signingKey: key.pointer, validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ])
        certificatePEM = try certificate.pem()
        privateKeyPEM = keyPEM
    }

    /// An existing CA (say, one `apple-sim` saved); the key must match the certificate.
    public init(certificatePEM: String, privateKeyPEM: String) throws(TLSError) {
        guard let certificate = try X509Certificate.readAll(pem: certificatePEM).first else { throw .setup("no CA certificate") }
        let key = try PEMPrivateKey(pem: privateKeyPEM)
        guard X509_check_private_key(certificate.pointer, key.pointer) == 1 else {
            throw .setup("CA key does not match the certificate: \(TLSError.drainReasons() ?? "mismatch")")
        }
        self.certificatePEM = certificatePEM
        self.privateKeyPEM = privateKeyPEM
    }

    /// Issues a server certificate with a fresh P-256 key for the given names and addresses.
    public func issue(
        dnsNames: [String] = ["localhost"], ipAddresses: [String] = ["127.0.0.1", "::1"], validityDays: Int = 30
    ) throws(TLSError) -> IssuedCertificate {
        guard !dnsNames.isEmpty || !ipAddresses.isEmpty else { throw .setup("a certificate needs a DNS name or an IP address") }
        var alternativeNames: [String] = []
        for name in dnsNames {
            // The names go into an OpenSSL configuration string, whose separators must not appear.
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ":") }) else {
                throw .setup("invalid DNS name for a certificate")
            }
            alternativeNames.append("DNS:\(name)")
        }
        for address in ipAddresses {
            guard IPAddressText.isLiteral(address) else { throw .setup("invalid IP address for a certificate") }
            alternativeNames.append("IP:\(address)")
        }
        return try issueLeaf(
            subject: dnsNames.first ?? ipAddresses[0], alternativeNames: alternativeNames.joined(separator: ","), validityDays: validityDays)
    }

    /// A leaf that names its host only in the subject's CN, with no subjectAltName: the kind of
    /// certificate a client must refuse (RFC 6125 §6.4.4), which OpenSSL accepts by falling back
    /// to the CN unless told not to. For tests of `TLSClientContext`.
    public func issueWithoutAlternativeNames(commonName: String, validityDays: Int = 30) throws(TLSError) -> IssuedCertificate {
        try issueLeaf(subject: commonName, alternativeNames: nil, validityDays: validityDays)
    }

    private func issueLeaf(subject: String, alternativeNames: String?, validityDays: Int) throws(TLSError) -> IssuedCertificate {
        guard let caCertificate = try X509Certificate.readAll(pem: certificatePEM).first else { throw .setup("no CA certificate") }
        let caKey = try PEMPrivateKey(pem: privateKeyPEM)
        let leafKeyPEM = try Self.generateKeyPEM()
        let leafKey = try PEMPrivateKey(pem: leafKeyPEM)
        var extensions: [(Int32, String)] = [
            (NID_basic_constraints, "critical,CA:FALSE"),
            (NID_key_usage, "critical,digitalSignature"),
            (NID_ext_key_usage, "serverAuth"),
        ]
        if let alternativeNames { extensions.append((NID_subject_alt_name, alternativeNames)) }
        extensions += [(NID_subject_key_identifier, "hash"), (NID_authority_key_identifier, "keyid:always")]
        let leaf = try Self.build(
            subject: subject, publicKey: leafKey.pointer, issuer: caCertificate, signingKey: caKey.pointer, validityDays: validityDays,
            extensions: extensions)
        return IssuedCertificate(certificatePEM: try leaf.pem(), privateKeyPEM: leafKeyPEM, caCertificatePEM: certificatePEM)
    }

    private static func generateKeyPEM() throws(TLSError) -> String {
        do {
            return try P256PrivateKey.generate().pem()
        } catch {
            throw .setup("generate P-256 key: \(error)")
        }
    }

    /// Builds and signs a v3 certificate; `issuer` nil means self-signed.
    private static func build(
        subject: String, publicKey: OpaquePointer, issuer: X509Certificate?, signingKey: OpaquePointer, validityDays: Int,
        extensions: [(Int32, String)]
    ) throws(TLSError) -> X509Certificate {
        ERR_clear_error()
        guard let pointer = X509_new() else { throw .openSSL("X509_new") }
        let certificate = X509Certificate(taking: pointer)
        guard X509_set_version(pointer, Int(X509_VERSION_3)) == 1 else { throw .openSSL("set certificate version") }

        // 16 random bytes, top bit clear: a positive serial of at most 20 octets (RFC 5280 §4.1.2.2).
        var serialBytes = SecureRandom.bytes(16)
        serialBytes[0] = (serialBytes[0] & 0x7F) | 0x01
        guard let serial = BN_bin2bn(serialBytes, Int32(serialBytes.count), nil) else { throw .openSSL("serial number") }
        defer { BN_free(serial) }
        guard BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(pointer)) != nil else { throw .openSSL("serial number") }

        guard let name = X509_NAME_new() else { throw .openSSL("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        guard X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, subject, -1, -1, 0) == 1 else { throw .openSSL("subject name") }
        guard X509_set_subject_name(pointer, name) == 1 else { throw .openSSL("subject name") }
        let issuerName = issuer.map { X509_get_subject_name($0.pointer) } ?? name
        guard X509_set_issuer_name(pointer, issuerName) == 1 else { throw .openSSL("issuer name") }

        // Backdated an hour so a peer whose clock is a little behind still accepts it.
        guard X509_gmtime_adj(X509_getm_notBefore(pointer), -3600) != nil,
            X509_gmtime_adj(X509_getm_notAfter(pointer), max(1, validityDays) * 86_400) != nil
        else { throw .openSSL("validity") }
        guard X509_set_pubkey(pointer, publicKey) == 1 else { throw .openSSL("public key") }

        for (nid, value) in extensions {
            var context = X509V3_CTX()
            X509V3_set_ctx(&context, issuer?.pointer ?? pointer, pointer, nil, nil, 0)
            guard let `extension` = X509V3_EXT_conf_nid(nil, &context, nid, value) else { throw .openSSL("certificate extension \(nid)") }
            defer { X509_EXTENSION_free(`extension`) }
            guard X509_add_ext(pointer, `extension`, -1) == 1 else { throw .openSSL("certificate extension \(nid)") }
        }
        guard X509_sign(pointer, signingKey, EVP_sha256()) > 0 else { throw .openSSL("sign certificate") }
        return certificate
    }
}
