import HTTPClient
import HTTPServer
import TLS

/// A real `HTTPServer` behind a real `TLSTerminator` presenting a leaf from a throwaway
/// `CertificateAuthority`, all on loopback.
struct TLSFixture {
    let authority: CertificateAuthority
    let server: HTTPServer
    let terminator: TLSTerminator
    let port: UInt16

    static func start(
        dnsNames: [String] = ["localhost"], ipAddresses: [String] = ["127.0.0.1", "::1"], commonNameOnly: String? = nil,
        configure: (inout Router) -> Void = { _ in }
    ) throws -> TLSFixture {
        var router = Router()
        router.add(.get, "/hello") { _ in HTTPResponse(contentType: "text/plain", body: "hi") }
        router.add(.post, "/echo") { request in
            HTTPResponse(headers: ["Content-Type": "application/octet-stream"], body: request.body)
        }
        configure(&router)
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: 0, threads: 2), router: router)
        let backendPort = try server.start()
        let authority = try CertificateAuthority()
        let leaf = try commonNameOnly.map { try authority.issueWithoutAlternativeNames(commonName: $0) }
            ?? authority.issue(dnsNames: dnsNames, ipAddresses: ipAddresses)
        let terminator = TLSTerminator(context: try TLSServerContext(leaf), backendPort: backendPort)
        let port = try terminator.start()
        return TLSFixture(authority: authority, server: server, terminator: terminator, port: port)
    }

    /// A client that trusts this fixture's CA and nothing else. Idle connections are kept ten
    /// minutes: a test starved by the rest of the suite can wait longer than the default 30 s
    /// between two requests.
    func client(_ adjust: (inout HTTPClientConfiguration) -> Void = { _ in }) throws -> HTTPClient {
        var configuration = HTTPClientConfiguration(extraCAPEM: authority.certificatePEM, trustOnlyExtraCAs: true, idleTimeout: .seconds(600))
        adjust(&configuration)
        return try HTTPClient(configuration: configuration)
    }

    func url(_ path: String, host: String = "127.0.0.1") -> String { "https://\(host):\(port)\(path)" }

    func stop() async {
        terminator.stop()
        await server.stop()
    }
}
