import HTTPServer
import WireFormat

/// The address a request came from, for logs and rate limits. `X-Forwarded-For` is believed
/// only when the peer is one of `trusted_proxies`, and then only back to the first hop that is
/// not a trusted proxy: entries further left were written by the client and prove nothing.
enum ClientAddress {
    static func resolve(peer: String, forwardedFor: String?, trusted: CIDRSet) -> String {
        guard let forwardedFor, !trusted.isEmpty, trusted.contains(peer) else { return peer }
        var client = peer
        for entry in forwardedFor.split(separator: ",").reversed() {
            let candidate = String(entry.trimmingHTTPWhitespace())
            guard IPAddressLiteral(candidate) != nil else { return client }
            client = candidate
            if !trusted.contains(candidate) { return candidate }
        }
        return client
    }

    /// Whom a request's password attempts are counted against (docs/guides/passwords-and-email.md): its client, an IPv6
    /// client by its /64 as the rate limiter counts it.
    static func attemptKey(of request: HTTPRequest, trusted: CIDRSet) -> String {
        let address = resolve(peer: request.remoteAddress, forwardedFor: request.headers.combinedValue("X-Forwarded-For"), trusted: trusted)
        return Hex.encode(ClientKey(address: address).bytes)
    }
}
