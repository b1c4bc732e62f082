import HTTPServer

/// Keeps web pages out of the control API. `/sim/log` holds codes and client secrets and
/// `/sim/*` acts as Apple, so a page on another site must neither drive it with a cross-site
/// form (or a no-cors `fetch`) nor read it. Browsers always send `Origin` on such requests
/// (`null` from sandboxed and privacy-minded contexts), and a form cannot send a JSON content
/// type; curl and tests send no `Origin` at all.
struct ControlRequestGuard: Sendable {
    /// Host names an `Origin` of the simulator itself may carry: loopback ones and the host it
    /// listens on. Naming them (rather than trusting any `Origin` equal to `Host`) keeps a
    /// DNS-rebound `evil.example` out too.
    let hosts: Set<String>

    init(listenHost: String) {
        var hosts: Set<String> = ["localhost", "127.0.0.1", "[::1]"]
        let host = listenHost.lowercased()
        // A wildcard listener has no name of its own; only the loopback names are ours then.
        if host != "0.0.0.0", host != "::" { hosts.insert(host.contains(":") ? "[\(host)]" : host) }
        self.hosts = hosts
    }

    /// The refusal for `request`, or nil when it may proceed.
    func refusal(_ request: HTTPRequest) -> HTTPResponse? {
        if let origin = request.headers["Origin"], !isOwn(origin: origin, host: request.headers["Host"]) {
            return ControlResponse.error("Cross-site requests to the control API are refused.", code: "forbidden", status: 403)
        }
        if request.method == .post, !Self.isJSON(request.headers["Content-Type"]) {
            return ControlResponse.error(
                "The control API takes Content-Type: application/json.", code: "unsupported_media_type", status: 415)
        }
        return nil
    }

    /// `http(s)://` + exactly the `Host` the request came to, that host being one of ours.
    func isOwn(origin: String, host: String?) -> Bool {
        guard let host else { return false }
        let lower = origin.lowercased()
        let authority: Substring
        if lower.hasPrefix("http://") {
            authority = lower.dropFirst(7)
        } else if lower.hasPrefix("https://") {
            authority = lower.dropFirst(8)
        } else {
            return false
        }
        guard authority == host.lowercased() else { return false }
        let name = authority.hasPrefix("[") ? authority.prefix { $0 != "]" } + "]" : authority.prefix { $0 != ":" }
        return hosts.contains(String(name))
    }

    /// `application/json`, parameters allowed (`; charset=utf-8`).
    static func isJSON(_ value: String?) -> Bool {
        guard let value else { return false }
        let mediaType = value.prefix { $0 != ";" }.filter { $0 != " " && $0 != "\t" }
        return mediaType.lowercased() == "application/json"
    }
}
