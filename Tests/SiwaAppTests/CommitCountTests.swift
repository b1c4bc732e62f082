import AppleSimulator
import Foundation
import HTTPServer
import JSON
import Testing
@testable import SiwaApp
@testable import Store

/// Each acknowledged change is one commit (issue 13): counted at the SQLite writer, with the
/// application assembled but not started, so no background job writes meanwhile.
@Suite struct CommitCountTests {
    static let app = "com.example.commits"

    final class Fixture: Stoppable {
        let simulator: AppleIDSimulator
        let folder = NSTemporaryDirectory() + "siwa-commits-" + UUID().uuidString
        let application: Application
        /// An application like a TestApp's, so it takes a slot as one does (AppSlots).
        private let slot: AppSlot?

        init() async throws {
            slot = AppSlots.inScope ? nil : try await AppSlots.shared.take()
            simulator = try AppleIDSimulator(configuration: .testing())
            try simulator.start()
            var configuration = Configuration()
            configuration.listen = ListenAddress(host: "127.0.0.1", port: 0)
            configuration.database = folder + "/siwa.sqlite3"
            configuration.clientIDs = [CommitCountTests.app]
            configuration.appleBaseURL = simulator.baseURL
            configuration.teamID = simulator.teamID
            configuration.keyID = simulator.keyID
            configuration.privateKeyPEM = simulator.developerKeyPEM
            application = try Application(configuration: configuration)
            await application.apple.keys.refresh()
        }

        var commits: Int { application.store.sqliteCommitCount ?? -1 }

        func post(_ path: String, _ body: [(String, JSONValue)] = []) async -> (status: Int, json: JSONObject?) {
            let bytes = Array(JSONWriter.string(.object(JSONObject(body))).utf8)
            let response = await application.responder.respond(
                to: HTTPRequest(.post, path, headers: ["Content-Type": "application/json"], body: bytes))
            return (response.status, try? JSONParser.parse(response.body).object)
        }

        func stop() async {
            await application.stop()
            await simulator.stop()
            try? FileManager.default.removeItem(atPath: folder)
            slot?.release()
        }
    }

    static let user = JSONValue.object(JSONObject([("name", .object(JSONObject([("firstName", .string("Ada"))])))]))

    @Test func aSignInWithoutACodeIsOneCommitAndUsesUpItsNonce() async throws {
        try await withFixture(Fixture()) { fixture in
            let nonce = try #require(await fixture.post("/api/auth/apple/nonce").json?["nonce"]?.string)
            let token = try fixture.simulator.issueCode(sub: "000700.commit.1", clientID: Self.app, nonce: nonce).identityToken

            let before = fixture.commits
            let signedIn = await fixture.post("/api/auth/apple", [("identity_token", .string(token)), ("nonce", .string(nonce)), ("user", Self.user)])
            #expect(signedIn.status == 200)
            #expect(signedIn.json?["user"]?.object?["name"]?.object?["given"]?.string == "Ada")
            #expect(fixture.commits - before == 1)

            // The nonce went with that commit: a second token carrying it is a replay.
            let again = try fixture.simulator.issueCode(sub: "000700.commit.1", clientID: Self.app, nonce: nonce).identityToken
            let replayed = await fixture.post("/api/auth/apple", [("identity_token", .string(again)), ("nonce", .string(nonce))])
            #expect(replayed.status == 401)
            #expect(replayed.json?["error_description"]?.string == "replayed")
        }
    }

    @Test func aSignInWithACodeCommitsOnceBeforeAppleAndOnceAfter() async throws {
        try await withFixture(Fixture()) { fixture in
            let issued = try fixture.simulator.issueCode(sub: "000700.commit.2", clientID: Self.app, nonce: "client-nonce")
            let before = fixture.commits
            let signedIn = await fixture.post("/api/auth/apple", [
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)),
                ("nonce", .string("client-nonce")), ("user", Self.user),
            ])
            #expect(signedIn.status == 200)
            // The one-time name kept before the code goes to Apple, then user, tokens and session.
            #expect(fixture.commits - before == 2)
        }
    }
}
