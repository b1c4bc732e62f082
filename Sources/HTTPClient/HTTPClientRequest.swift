/// A request to send. `Host`, `Content-Length`, `Accept-Encoding` and `Connection` are the
/// client's to set; headers of those names given here are ignored.
public struct HTTPClientRequest: Sendable {
    public var method: String
    /// `https://host[:port]/path?query`; `http://` only for loopback hosts.
    public var url: String
    public var headers: [(String, String)]
    public var body: [UInt8]

    public init(method: String = "GET", url: String, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
