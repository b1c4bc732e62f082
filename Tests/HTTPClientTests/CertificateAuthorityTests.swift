import TLS
import Testing

@Suite struct CertificateAuthorityTests {
    @Test func aSavedAuthorityLoadsAndItsLeavesAreTrusted() throws {
        let original = try CertificateAuthority(commonName: "test CA")
        let reloaded = try CertificateAuthority(certificatePEM: original.certificatePEM, privateKeyPEM: original.privateKeyPEM)
        let leaf = try reloaded.issue(dnsNames: ["a.test", "b.test"], ipAddresses: ["10.1.2.3"], validityDays: 2)
        #expect(leaf.caCertificatePEM == original.certificatePEM)
        #expect(leaf.certificatePEM.hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(leaf.privateKeyPEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        #expect(leaf.chainPEM == leaf.certificatePEM + original.certificatePEM)
        _ = try TLSServerContext(leaf)
    }

    @Test func mismatchedOrBadInputIsRefused() throws {
        let one = try CertificateAuthority()
        let two = try CertificateAuthority()
        #expect(throws: TLSError.self) { try CertificateAuthority(certificatePEM: one.certificatePEM, privateKeyPEM: two.privateKeyPEM) }
        #expect(throws: TLSError.self) { try one.issue(dnsNames: ["a,IP:1.2.3.4"]) }
        #expect(throws: TLSError.self) { try one.issue(dnsNames: [], ipAddresses: ["not-an-ip"]) }
        #expect(throws: TLSError.self) { try one.issue(dnsNames: [], ipAddresses: []) }
        let leaf = try one.issue()
        #expect(throws: TLSError.self) { try TLSServerContext(certificateChainPEM: leaf.chainPEM, privateKeyPEM: two.privateKeyPEM) }
        #expect(throws: TLSError.self) { try TLSClientContext(extraCAPEM: "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n") }
        #expect(throws: TLSError.self) { try TLSClientContext(extraCAPEM: "no PEM here") }
    }

    @Test func errorsNameTheReasonButNotTheKey() throws {
        let authority = try CertificateAuthority()
        let other = try CertificateAuthority()
        do {
            _ = try TLSServerContext(certificateChainPEM: try authority.issue().certificatePEM, privateKeyPEM: other.privateKeyPEM)
            Issue.record("a mismatched key was accepted")
        } catch {
            let text = "\(error)"
            #expect(text.contains("private key"))
            #expect(!text.contains("BEGIN"))
            #expect(!text.contains(String(other.privateKeyPEM.split(separator: "\n")[1].prefix(20))))
        }
    }
}
