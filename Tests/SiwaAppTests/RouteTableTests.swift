import JSON
import Testing
@testable import SiwaApp

/// The route table (`Routes`) and the OpenAPI document are one contract: every route of the
/// table is described with what its guard asks, and every described operation is in the table.
@Suite struct RouteTableTests {
    static let methods = ["get", "post", "put", "patch", "delete"]
    static let adminToken = "admin-route-table-0123456789abcdefghijkl"

    /// The table with every optional part switched on but the demo's own receiver, which the
    /// document does not describe.
    static func table() async throws -> [Route] {
        try await withApp(configure: { $0.adminToken = Self.adminToken }) { app in app.application.routeTable }
    }

    static func operations() throws -> [String: JSONObject] {
        let paths = try #require(try JSONParser.parse(OpenAPIDocument.json).object?["paths"]?.object)
        var operations: [String: JSONObject] = [:]
        for (path, item) in paths {
            for method in methods {
                if let operation = item.object?[method]?.object { operations["\(method.uppercased()) \(path)"] = operation }
            }
        }
        return operations
    }

    @Test func everyRouteOfTheTableIsDescribedAndEveryDescribedRouteIsInTheTable() async throws {
        let table = try await Self.table()
        let listed = table.map { "\($0.method.rawValue) \($0.path)" }
        #expect(Set(listed).count == listed.count, "a route listed twice")
        let described = try Self.operations()
        #expect(Set(listed).subtracting(described.keys).sorted() == [], "in the table, not described")
        #expect(Set(described.keys).subtracting(listed).sorted() == [], "described, not in the table")
        #expect(table.count == described.count)
    }

    /// What the guard asks is what the document says: a session route names the bearer token and
    /// the cookie, an admin route the admin token, a rate-limited one its 429; an open route asks
    /// for no credential.
    @Test func eachRouteIsDescribedWithItsGuard() async throws {
        let described = try Self.operations()
        for route in try await Self.table() {
            let name = "\(route.method.rawValue) \(route.path)"
            let operation = try #require(described[name], "\(name)")
            let schemes = operation["security"]?.array?.compactMap { $0.object?.keys.first } ?? []
            let statuses = Set(operation["responses"]?.object?.keys ?? [])
            switch route.access {
            case .session:
                #expect(schemes == ["bearer", "sessionCookie"], "\(name)")
                #expect(statuses.contains("401"), "\(name)")
            case .admin:
                #expect(schemes == ["adminToken"], "\(name)")
                #expect(statuses.contains("401"), "\(name)")
            case .rateLimited:
                #expect(schemes == [], "\(name)")
                #expect(statuses.contains("429"), "\(name)")
            case .open:
                #expect(schemes == [], "\(name)")
            case .page, .rateLimitedPage:
                #expect(!schemes.contains("bearer") && !schemes.contains("adminToken"), "\(name)")
            case .console(let rateLimited):
                // The console's pages ask for its own session (the sign-in form and its post, none).
                #expect(schemes == [] || schemes == ["consoleCookie"], "\(name)")
                if rateLimited { #expect(statuses.contains("429"), "\(name)") }
            }
        }
    }

    /// The document served is the embedded resource, byte for byte.
    @Test func theServedDocumentIsTheEmbeddedResource() async throws {
        try await withApp { app in
            let reply = try await app.send(.get, "/openapi.json")
            #expect(reply.status == 200)
            #expect(reply.body == OpenAPIDocument.json)
            #expect(OpenAPIDocument.json.hasPrefix("{") && OpenAPIDocument.json.contains(#""openapi": "3.1.0""#))
        }
    }
}
