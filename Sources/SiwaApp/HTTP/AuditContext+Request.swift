import HTTPServer
import Store

extension AuditContext {
    /// Who acts through `request`: its client address after `trusted_proxies` (as the logs and
    /// rate limits see it) and its `User-Agent`.
    init(_ request: HTTPRequest, trusted: CIDRSet, actor: AuditActor = .user, sessionID: String? = nil) {
        let ip = ClientAddress.resolve(peer: request.remoteAddress, forwardedFor: request.headers.combinedValue("X-Forwarded-For"), trusted: trusted)
        self.init(actor: actor, ip: ip.isEmpty ? nil : ip, userAgent: request.headers["User-Agent"], sessionID: sessionID)
    }
}
