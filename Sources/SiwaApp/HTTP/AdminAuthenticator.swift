import HTTPServer
import OpenSSLCrypto

/// The admin API's credential (docs/guides/connecting-your-backend.md): `Authorization: Bearer <admin_token>`. Only the
/// token's SHA-256 is kept, and a request's bearer is hashed and compared with it in constant
/// time, so neither the comparison's timing nor the length of a guess tells how close it was.
struct AdminAuthenticator: Sendable {
    private let tokenDigest: [UInt8]

    init(token: String) {
        tokenDigest = SHA256.hash(token)
    }

    /// Whether `path` belongs to the admin API.
    static func covers(_ path: String) -> Bool {
        path == "/admin" || path.hasPrefix("/admin/")
    }

    /// Whether the request carries the admin token. The scheme is case-insensitive (RFC 9110
    /// §11.1); spaces and tabs around the token are not part of it.
    func isAuthorized(_ request: HTTPRequest) -> Bool {
        guard let header = request.headers["Authorization"] else { return false }
        let bytes = Array(header.utf8)
        let scheme = "bearer "
        guard bytes.count > scheme.utf8.count, String(decoding: bytes.prefix(scheme.utf8.count), as: UTF8.self).lowercased() == scheme
        else { return false }
        let isBlank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 }
        guard let first = bytes.indices.dropFirst(scheme.utf8.count).first(where: { !isBlank(bytes[$0]) }),
              let last = bytes.indices.last(where: { !isBlank(bytes[$0]) })
        else { return false }
        return ConstantTime.equals(SHA256.hash(bytes[first...last]), tokenDigest)
    }

    /// Whether `token` is the admin token (the console's sign-in form), compared as the bearer is.
    func matches(token: String) -> Bool {
        ConstantTime.equals(SHA256.hash(Array(token.utf8)), tokenDigest)
    }

    /// Runs `handler` only for requests that carry the admin token; others get 401.
    func guarding(_ handler: @escaping HTTPHandler) -> HTTPHandler {
        { request in
            guard isAuthorized(request) else { throw APIError.adminUnauthenticated }
            return try await handler(request)
        }
    }

    /// An admin path that matches no route, or not with this method, answers a caller without
    /// the token 401 as the routes do, so the route table is shown only to the token's holder,
    /// who gets the honest 404 or 405.
    func hidingUnknownRoutes(_ render: @escaping RoutingResponder.ErrorRenderer) -> RoutingResponder.ErrorRenderer {
        { error, request in
            if let refusal = error as? HTTPRefusal, refusal.status == 404 || refusal.status == 405, let request,
               Self.covers(request.path), !isAuthorized(request)
            {
                return render(APIError.adminUnauthenticated, request)
            }
            return render(error, request)
        }
    }
}
