import HTTPServer
import Store

extension SessionAuthenticator {
    /// The audit context of a change the signed-in person makes through `request`.
    func audit(_ request: HTTPRequest, _ found: Authenticated) -> AuditContext {
        AuditContext(request, trusted: trustedProxies, sessionID: found.session.id)
    }
}
