import JSON
import Testing
@testable import SiwaApp

/// `GET /openapi.json` stays true: valid JSON, every route served is described and every
/// described route is served, and every `$ref` resolves.
@Suite struct OpenAPITests {
    static let methods = ["get", "post", "put", "patch", "delete"]

    static func document() throws -> JSONObject {
        try #require(try JSONParser.parse(OpenAPIDocument.json).object)
    }

    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func theServedDocumentIsOpenAPI31(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withApp(engine: engine, transport: transport) { harness in
            let reply = try await harness.get("/openapi.json")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "application/json")
            let served = try #require(try JSONParser.parse(reply.body).object)
            #expect(served["openapi"]?.string == "3.1.0")
            #expect(served == (try Self.document()))
        }
    }

    /// The document names the cookie the server sets and reads (one constant for all three).
    @Test func theCookieSchemeNamesTheSessionCookie() throws {
        let schemes = try #require(try Self.document()["components"]?.object?["securitySchemes"]?.object)
        #expect(schemes["sessionCookie"]?.object?["name"]?.string == "siwa_session")
        #expect(SessionCookies.sessionName == "siwa_session")
    }

    @Test func everyRouteIsDescribedAndEveryDescribedRouteExists() async throws {
        // Every optional part switched on, so its routes are served too.
        let served = try await withApp(configure: { $0.adminToken = AdminRoutesTests.token }) { app in
            Set(app.application.routes.map { "\($0.method) \($0.pattern)" })
        }
        let paths = try #require(try Self.document()["paths"]?.object)
        var described: Set<String> = []
        for (path, item) in paths {
            for method in Self.methods where item.object?[method] != nil {
                described.insert("\(method.uppercased()) \(path)")
            }
        }
        #expect(served.subtracting(described).sorted() == [], "served but not described")
        #expect(described.subtracting(served).sorted() == [], "described but not served")
        #expect(served.count > 10)
    }

    /// Every admin operation names the admin token's scheme and its 401, and nothing else does.
    @Test func adminOperationsNeedTheAdminToken() throws {
        let document = try Self.document()
        #expect(document["components"]?.object?["securitySchemes"]?.object?["adminToken"]?.object?["scheme"]?.string == "bearer")
        let paths = try #require(document["paths"]?.object)
        var adminOperations = 0
        for (path, item) in paths {
            for method in Self.methods {
                guard let operation = item.object?[method]?.object else { continue }
                let schemes = operation["security"]?.array?.compactMap { $0.object?.keys.first } ?? []
                if path.hasPrefix("/admin/") {
                    adminOperations += 1
                    #expect(schemes == ["adminToken"], "\(method) \(path)")
                    #expect(operation["responses"]?.object?["401"] != nil, "\(method) \(path)")
                } else {
                    #expect(!schemes.contains("adminToken"), "\(method) \(path)")
                }
            }
        }
        #expect(adminOperations == 6)
    }

    @Test func everyReferenceResolves() throws {
        let document = try Self.document()
        var references: [String] = []
        func collect(_ value: JSONValue) {
            if let object = value.object {
                for (key, member) in object {
                    if key == "$ref", let target = member.string { references.append(target) } else { collect(member) }
                }
            } else if let array = value.array {
                array.forEach(collect)
            }
        }
        collect(.object(document))
        #expect(!references.isEmpty)
        for reference in Set(references) {
            var node: JSONValue? = .object(document)
            for part in reference.dropFirst(2).split(separator: "/") { node = node?.object?[String(part)] }
            #expect(node != nil, "\(reference) does not resolve")
        }
    }

    @Test func everyOperationHasAnIDAndResponses() throws {
        let paths = try #require(try Self.document()["paths"]?.object)
        var ids: [String] = []
        for (path, item) in paths {
            for method in Self.methods {
                guard let operation = item.object?[method]?.object else { continue }
                let id = try #require(operation["operationId"]?.string, "\(method) \(path)")
                ids.append(id)
                #expect(!(operation["responses"]?.object?.isEmpty ?? true), "\(method) \(path)")
            }
        }
        #expect(Set(ids).count == ids.count)
    }
}
