import Testing
@testable import SiwaApp

/// `/static/siwa.css` and `/static/siwa.js` serve the resource files' bytes, exactly.
@Suite struct StaticAssetsTests {
    @Test(arguments: DatabaseEngine.available)
    func theServedBytesAreTheResourceFiles(_ engine: DatabaseEngine) async throws {
        try await withFixture(WebFlowTests.Fixture(engine: engine)) { fixture in
            for (path, file, type) in [
                ("/static/siwa.css", EmbeddedFiles.siwaCSS, "text/css; charset=utf-8"),
                ("/static/siwa.js", EmbeddedFiles.siwaJS, "text/javascript; charset=utf-8"),
            ] {
                let reply = try await fixture.send("GET", path)
                #expect(reply.status == 200)
                #expect(reply.header("Content-Type") == type)
                #expect(reply.header("Cache-Control") == "public, max-age=3600")
                #expect(Array(reply.body.utf8) == file)
            }
        }
    }
}
