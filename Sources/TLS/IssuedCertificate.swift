/// A leaf certificate and its key, as PEM, with the CA that signed it.
public struct IssuedCertificate: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String
    public let caCertificatePEM: String

    /// Leaf then CA: what a server presents.
    public var chainPEM: String { certificatePEM + caCertificatePEM }
}
