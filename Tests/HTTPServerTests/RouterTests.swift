import Testing
@testable import HTTPServer

@Suite struct RouterTests {
    private func router() -> Router {
        var router = Router()
        let ok: HTTPHandler = { _ in HTTPResponse() }
        router.add(.get, "/healthz", ok)
        router.add(.post, "/api/logout", ok)
        router.add(.get, "/api/sessions", ok)
        router.add(.delete, "/api/sessions/{id}", ok)
        router.add(.get, "/users/{user}/sessions/{id}", ok)
        return router
    }

    @Test func matchesLiteralRoutes() {
        guard case .found(let route, let parameters) = router().match(method: .get, path: "/healthz") else {
            Issue.record("no match")
            return
        }
        #expect(route.pattern == "/healthz")
        #expect(parameters.isEmpty)
    }

    @Test func bindsAndPercentDecodesParameters() {
        guard case .found(let route, let parameters) = router().match(method: .get, path: "/users/ada%20l/sessions/s_1") else {
            Issue.record("no match")
            return
        }
        #expect(route.pattern == "/users/{user}/sessions/{id}")
        #expect(parameters == ["user": "ada l", "id": "s_1"])
    }

    @Test func headFallsBackToGet() {
        guard case .found(let route, _) = router().match(method: .head, path: "/healthz") else {
            Issue.record("HEAD did not match GET")
            return
        }
        #expect(route.method == .get)
    }

    @Test func wrongMethodListsTheAllowedOnes() {
        guard case .methodNotAllowed(let allow) = router().match(method: .post, path: "/healthz") else {
            Issue.record("expected 405")
            return
        }
        #expect(allow == "GET, HEAD")
        guard case .methodNotAllowed(let paramAllow) = router().match(method: .get, path: "/api/sessions/abc") else {
            Issue.record("expected 405")
            return
        }
        #expect(paramAllow == "DELETE")
    }

    @Test(arguments: ["/nope", "/healthz/", "/api/sessions/", "/api/sessions/a/b", "/users/x/sessions", "/api/sessions/%zz"])
    func unknownPathsAreNotFound(_ path: String) {
        guard case .notFound = router().match(method: .get, path: path) else {
            // `/api/sessions/` has an empty id segment: not a match for {id}.
            Issue.record("\(path) should be 404")
            return
        }
    }

    @Test func listsEveryRoute() {
        #expect(Set(router().routes.map { "\($0.method) \($0.pattern)" }) == [
            "GET /healthz", "POST /api/logout", "GET /api/sessions", "DELETE /api/sessions/{id}",
            "GET /users/{user}/sessions/{id}",
        ])
    }
}
