import Foundation
import HTTPServer
import JOSE
import JSON
import Logging
import OpenSSLCrypto
import Store
import Testing
import TestSupport
@testable import SiwaApp

/// docs/guides/connecting-your-backend.md "Access tokens": `POST /api/token` and `GET /.well-known/jwks.json` in process on
/// both engines with a socket sample, the tokens checked by an independent implementation, and rotation under a held clock.
@Suite(.timeLimit(.minutes(2)))
struct AccessTokenTests {

    struct Reply {
        let status: Int
        let headers: [String: String]
        let body: String
        var json: JSONObject? { try? JSONParser.parse(body).object }
    }

    /// An application with `POST /api/token`, and sessions made as a sign-in makes them.
    final class Fixture: Stoppable {
        let harness: TestApp
        var application: Application { harness.application }
        var keys: AccessTokenKeys { harness.application.accessTokenKeys }

        init(
            engine: DatabaseEngine = .sqlite, transport: Transport = .inProcess, clock: HeldClock? = nil,
            configure: @escaping (inout Configuration) -> Void = { _ in }
        ) async throws {
            harness = try await TestApp(engine: engine, transport: transport, clock: clock) {
                $0.publicURL = "https://auth.example.com"
                configure(&$0)
            }
        }

        /// A signed-in user (with `externalID` when given): the user and the session token.
        func signIn(sub: String, externalID: String? = nil, now: Int64) async throws -> (user: UserRecord, session: String) {
            let write = SignInWrite(
                identity: VerifiedIdentity(appleSub: sub, email: "\(sub)@privaterelay.appleid.com", emailVerified: true, isPrivateEmail: true),
                tokenHash: SHA256.hash(sub + "-token-\(now)"), tokenExpiresAt: now + 600, sessionTTL: 86_400 * 90)
            let signedIn = try await application.store.completeSignIn(write, now: now)
            var user = signedIn.user
            if let externalID { user = try #require(try await application.store.setExternalID(userID: user.id, externalID: externalID, now: now)) }
            return (user, signedIn.session.token)
        }

        func send(_ method: String, _ path: String, headers: [String: String] = [:]) async throws -> Reply {
            let reply = try await harness.get(path, method: HTTPMethod(method), headers: headers)
            return Reply(status: reply.status, headers: reply.headers, body: reply.body)
        }

        /// `POST /api/token` with the session as a bearer: the token.
        func token(_ session: String) async throws -> String {
            let reply = try await send("POST", "/api/token", headers: ["Authorization": "Bearer \(session)"])
            #expect(reply.status == 200, "\(reply.body)")
            return try #require(reply.json?["access_token"]?.string, "\(reply.body)")
        }

        func jwks() async throws -> [String] {
            let reply = try await send("GET", "/.well-known/jwks.json")
            return try #require(reply.json?["keys"]?.array).compactMap { $0.object?["kid"]?.string }
        }

        func stop() async { await harness.stop() }
    }

    /// One request to `application` (a restarted one, outside any fixture) through its responder.
    static func send(_ application: Application, _ method: String, _ path: String, headers: [String: String] = [:]) async throws -> Reply {
        var fields = HTTPHeaders()
        for (name, value) in headers { fields.add(name, value) }
        let response = await application.responder.respond(to: HTTPRequest(HTTPMethod(method), path, headers: fields))
        var names: [String: String] = [:]
        for (name, value) in response.headers { names[name.lowercased()] = value }
        return Reply(status: response.status, headers: names, body: String(decoding: response.body, as: UTF8.self))
    }

    /// The decoded header and claims of a compact JWS, unverified (the verifier is Python's).
    static func decode(_ token: String) throws -> (header: JSONObject, claims: JSONObject) {
        let parts = token.split(separator: ".").map(String.init)
        try #require(parts.count == 3)
        func object(_ part: String) throws -> JSONObject {
            var base64 = part.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while base64.count % 4 != 0 { base64 += "=" }
            let bytes = try #require(Data(base64Encoded: base64))
            return try #require(try JSONParser.parse(Array(bytes)).object)
        }
        return (try object(parts[0]), try object(parts[1]))
    }

    @Test(
        .enabled(if: PythonTools.testsEnabled, "the Python verifiers are not installed (Scripts/python-tools)"),
        arguments: DatabaseEngine.available)
    func aSessionGetsATokenThatAnIndependentVerifierAcceptsAgainstTheJWKS(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine) { $0.accessTokenTTL = .seconds(600) }) { fixture in
            let now = Int64(Date().timeIntervalSince1970)
            let (ada, session) = try await fixture.signIn(sub: "000900.00000000000000000000000000000900.0900", externalID: "crm-42", now: now)

            let reply = try await fixture.send("POST", "/api/token", headers: ["Authorization": "Bearer \(session)"])
            #expect(reply.status == 200)
            #expect(reply.headers["cache-control"] == "no-store")
            #expect(reply.headers["content-type"] == "application/json")
            let body = try #require(reply.json)
            #expect(body.keys == ["access_token", "token_type", "expires_in"])
            #expect(body["token_type"]?.string == "Bearer")
            #expect(body["expires_in"]?.integer == 600)
            let token = try #require(body["access_token"]?.string)
            // Read after the token arrived: on a loaded machine it may be seconds after `now`.
            let received = Int64(Date().timeIntervalSince1970)

            let verified = try await AccessTokenVerifier.verify(
                token, port: fixture.application.port, iss: "https://auth.example.com", aud: "https://auth.example.com", now: received)
            let kid = try #require(fixture.keys.publishedKids.first)
            #expect(verified.header == JSONObject([("alg", .string("ES256")), ("typ", .string("at+jwt")), ("kid", .string(kid))]))
            #expect(verified.cacheControl == "public, max-age=300")
            #expect(verified.kids == [kid])
            let claims = verified.claims
            #expect(Set(claims.keys) == ["iss", "sub", "aud", "iat", "exp", "jti", "sid", "apple_sub", "external_id"])
            #expect(claims["iss"]?.string == "https://auth.example.com")
            #expect(claims["sub"]?.string == ada.id)
            #expect(claims["aud"]?.string == "https://auth.example.com")
            let iat = try #require(claims["iat"]?.integer)
            #expect((now...received).contains(iat))
            #expect(claims["exp"]?.integer == iat + 600)
            #expect(claims["apple_sub"]?.string == ada.appleSub)
            #expect(claims["external_id"]?.string == "crm-42")
            let sessions = try await fixture.application.store.sessions.list(userID: ada.id, now: now)
            #expect(claims["sid"]?.string == sessions.first?.id)
            #expect(verified.tamperedRefused == ["claims": true, "signature": true, "typ": true, "kid": true, "alg none": true])

            // Each token has its own jti.
            let second = try await fixture.token(session)
            let jtis = try [token, second].map { try #require(try Self.decode($0).claims["jti"]?.string) }
            #expect(jtis[0] != jtis[1] && jtis.allSatisfy { $0.count >= 22 })
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theAudienceIsConfigurableAndUnsetClaimsAreLeftOut(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine) { $0.accessTokenAudienceSetting = "https://api.example.com" }) { fixture in
            let now = Int64(Date().timeIntervalSince1970)
            let (_, session) = try await fixture.signIn(sub: "000901.00000000000000000000000000000901.0901", now: now)
            let reply = try await fixture.send("POST", "/api/token", headers: ["Authorization": "Bearer \(session)"])
            #expect(reply.json?["expires_in"]?.integer == 300, "access_token_ttl defaults to 5m")
            let claims = try Self.decode(try #require(reply.json?["access_token"]?.string)).claims
            #expect(claims["aud"]?.string == "https://api.example.com")
            #expect(claims["iss"]?.string == "https://auth.example.com")
            #expect(claims["external_id"] == nil, "no external_id: no claim, not null")
            #expect(claims.keys == ["iss", "sub", "aud", "iat", "exp", "jti", "sid", "apple_sub"])
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func theJWKSIsPublicCacheableAndHoldsOnlyPublicHalves(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine)) { fixture in
            let reply = try await fixture.send("GET", "/.well-known/jwks.json")
            #expect(reply.status == 200)
            #expect(reply.headers["cache-control"] == "public, max-age=300")
            #expect(reply.headers["content-type"] == "application/json")
            let keys = try #require(reply.json?["keys"]?.array)
            #expect(keys.count == 1)
            let key = try #require(keys.first?.object)
            #expect(key.keys == ["kty", "crv", "x", "y", "alg", "use", "kid"])
            #expect(key["kty"]?.string == "EC" && key["crv"]?.string == "P-256" && key["alg"]?.string == "ES256" && key["use"]?.string == "sig")
            #expect(key["x"]?.string?.count == 43 && key["y"]?.string?.count == 43, "32 bytes each, base64url")
            #expect(key["d"] == nil)
            #expect(key["kid"]?.string == fixture.keys.publishedKids.first)
            // A restart uses the same key: it was kept in the database.
            await fixture.harness.stopApplication()
            try await withFixture(Application(configuration: fixture.application.configuration, accessLogSink: fixture.harness.sink)) { again in
                try again.start()
                #expect(again.accessTokenKeys.publishedKids == fixture.keys.publishedKids)
            }
        }
    }

    /// The socket sample.
    @Test(arguments: DatabaseEngine.available, Transport.allCases)
    func noLiveSessionNoToken(_ engine: DatabaseEngine, _ transport: Transport) async throws {
        try await withFixture(Fixture(engine: engine, transport: transport)) { fixture in
            let now = Int64(Date().timeIntervalSince1970)
            let (_, session) = try await fixture.signIn(sub: "000902.00000000000000000000000000000902.0902", now: now)

            let missing = try await fixture.send("POST", "/api/token")
            #expect(missing.status == 401)
            #expect(missing.json?["error"]?.string == "unauthenticated")
            #expect(try await fixture.send("POST", "/api/token", headers: ["Authorization": "Bearer not-a-session"]).status == 401)

            // The cookie works like everywhere on /api: from our own origin only.
            let cookie = ["Cookie": "siwa_session=\(session)"]
            #expect(try await fixture.send("POST", "/api/token", headers: cookie).status == 403)
            #expect(try await fixture.send("POST", "/api/token", headers: cookie.merging(["Origin": "https://evil.example"]) { $1 }).status == 403)
            let viaCookie = try await fixture.send("POST", "/api/token", headers: cookie.merging(["Origin": "https://auth.example.com"]) { $1 })
            #expect(viaCookie.status == 200)
            #expect(viaCookie.json?["access_token"]?.string != nil)

            // A session that ended makes no new tokens.
            _ = try await fixture.token(session)
            #expect(try await fixture.send("POST", "/api/logout", headers: ["Authorization": "Bearer \(session)"]).status == 204)
            let ended = try await fixture.send("POST", "/api/token", headers: ["Authorization": "Bearer \(session)"])
            #expect(ended.status == 401)
            #expect(ended.body.hasPrefix(#"{"error":"unauthenticated""#))
        }
    }

    /// With time held: after `signing_key_rotation` the periodic check makes a new key, which is
    /// published at once and signs after the publication lead; the old key stays in the JWKS for
    /// a day after it stopped signing, then leaves it, and housekeeping deletes it.
    @Test(arguments: DatabaseEngine.available)
    func rotationPublishesTheNewKeyBeforeItSignsAndKeepsTheOldOneADay(_ engine: DatabaseEngine) async throws {
        let start = Int64(Date().timeIntervalSince1970)
        let clock = HeldClock(start)
        try await withFixture(Fixture(engine: engine, clock: clock) {
            $0.signingKeyRotation = .seconds(7 * 86_400)
            // The session must outlive the days the clock is moved on.
            $0.sessionIdleTTL = .seconds(60 * 86_400)
        }) { fixture in
            let (_, session) = try await fixture.signIn(sub: "000903.00000000000000000000000000000903.0903", now: start)
            let first = try #require(fixture.keys.publishedKids.first)
            #expect(try Self.decode(try await fixture.token(session)).header["kid"]?.string == first)

            // Not yet due: the check changes nothing.
            clock.advance(by: 7 * 86_400 - 1)
            await fixture.keys.maintain()
            #expect(try await fixture.jwks() == [first])

            clock.advance(by: 1)
            await fixture.keys.maintain()
            let kids = try await fixture.jwks()
            #expect(kids.count == 2 && kids.first == first)
            let second = try #require(kids.last)
            // Published, but the old key still signs until every cache has the new one.
            #expect(try Self.decode(try await fixture.token(session)).header["kid"]?.string == first)
            clock.advance(by: AccessTokenKeys.publicationLead - 1)
            #expect(try Self.decode(try await fixture.token(session)).header["kid"]?.string == first)
            clock.advance(by: 1)
            let afterLead = try await fixture.token(session)
            #expect(try Self.decode(afterLead).header["kid"]?.string == second)
            #expect(try Self.decode(afterLead).claims["iat"]?.integer == clock.now)

            // A day after the old key stopped signing it leaves the set, then its row goes.
            clock.advance(by: 86_400 - 1)
            await fixture.keys.maintain()
            #expect(try await fixture.jwks() == [first, second])
            clock.advance(by: 1)
            await fixture.keys.maintain()
            #expect(try await fixture.jwks() == [second])
            let housekeeping = Housekeeping(store: fixture.application.store, idleTTL: 86_400 * 90, logger: Logger(label: "test"), clock: { clock.now })
            // The application's own pass (at its start, then each minute) may hold the turn on
            // PostgreSQL, or run first: either pass deletes the row once the clock says so.
            #expect(try await eventually {
                await housekeeping.runOnce()
                return try await fixture.application.store.signingKeys.published(now: 0).map(\.kid) == [second]
            })
            #expect(try Self.decode(try await fixture.token(session)).header["kid"]?.string == second)
        }
    }

    /// The kid of a fresh token from `application`, and the kids of its JWKS.
    static func signer(_ application: Application, session: String) async throws -> (token: String, jwks: [String]) {
        let reply = try await send(application, "POST", "/api/token", headers: ["Authorization": "Bearer \(session)"])
        let token = try #require(reply.json?["access_token"]?.string, "\(reply.body)")
        let jwks = try await send(application, "GET", "/.well-known/jwks.json")
        return (
            try #require(try decode(token).header["kid"]?.string),
            try #require(jwks.json?["keys"]?.array).compactMap { $0.object?["kid"]?.string })
    }

    /// Stops the fixture's server and runs `body` with the server's configuration, as
    /// `rotate-signing-key` would be run between a stop and a start; then starts the server
    /// again on the same database and clock, and hands it to `after`.
    static func withRestart(
        _ fixture: Fixture, clock: HeldClock, between body: (Configuration) throws -> Void, after: (Application) async throws -> Void
    ) async throws {
        await fixture.harness.stopApplication()
        var restarted: Application?
        do {
            let configuration = fixture.application.configuration
            try body(configuration)
            let application = try Application(configuration: configuration, accessLogSink: fixture.harness.sink, clocks: clock.clocks)
            restarted = application
            try application.start()
            try await after(application)
        } catch {
            await restarted?.stop()
            throw error
        }
        await restarted?.stop()
    }

    /// `rotate-signing-key` run while the server is stopped (docs/guides/connecting-your-backend.md): the server started
    /// afterwards signs its very first token with the new key; the old key stays in the JWKS
    /// until a day has passed, then leaves it.
    @Test(arguments: DatabaseEngine.available)
    func aKeyRotatedByTheCommandSignsTheFirstTokenAfterAStart(_ engine: DatabaseEngine) async throws {
        let start = Int64(Date().timeIntervalSince1970)
        let clock = HeldClock(start)
        try await withFixture(Fixture(engine: engine, clock: clock) { $0.sessionIdleTTL = .seconds(60 * 86_400) }) { fixture in
            let (_, session) = try await fixture.signIn(sub: "000905.00000000000000000000000000000905.0905", now: start)
            let first = try #require(fixture.keys.publishedKids.first)
            #expect(try await Self.signer(fixture.application, session: session) == (first, [first]))
            clock.advance(by: 3_600)
            var rotated: SigningKeyRotation.Rotated?
            try await Self.withRestart(fixture, clock: clock) { configuration in
                rotated = try SigningKeyRotation.rotate(configuration: configuration, logger: Logger(label: "test"), now: clock.now)
            } after: { restarted in
                let new = try #require(rotated)
                #expect(new.kid != first && new.signsFrom == clock.now)
                #expect(new.replacedUnpublishedAt == clock.now + 86_400)
                #expect(try await Self.signer(restarted, session: session) == (new.kid, [first, new.kid]), "the first token carries the new kid")

                clock.advance(by: 86_400 - 1)
                await restarted.accessTokenKeys.maintain()
                #expect(try await Self.signer(restarted, session: session) == (new.kid, [first, new.kid]))
                clock.advance(by: 1)
                await restarted.accessTokenKeys.maintain()
                #expect(try await Self.signer(restarted, session: session) == (new.kid, [new.kid]), "a day after, the old key is gone")
            }
        }
    }

    /// `rotate-signing-key --retire-old` (a key that leaked): every older key leaves the JWKS at
    /// once, also one a plain rotation had just replaced, and the new key signs.
    @Test(arguments: DatabaseEngine.available)
    func retiringTheOldKeysLeavesOnlyTheNewOneInTheJWKS(_ engine: DatabaseEngine) async throws {
        let start = Int64(Date().timeIntervalSince1970)
        let clock = HeldClock(start)
        try await withFixture(Fixture(engine: engine, clock: clock) { $0.sessionIdleTTL = .seconds(60 * 86_400) }) { fixture in
            let (_, session) = try await fixture.signIn(sub: "000906.00000000000000000000000000000906.0906", now: start)
            let first = try #require(fixture.keys.publishedKids.first)
            var plain: SigningKeyRotation.Rotated?
            var retiring: SigningKeyRotation.Rotated?
            try await Self.withRestart(fixture, clock: clock) { configuration in
                plain = try SigningKeyRotation.rotate(configuration: configuration, logger: Logger(label: "test"), now: clock.now)
                clock.advance(by: 60)
                retiring = try SigningKeyRotation.rotate(configuration: configuration, logger: Logger(label: "test"), now: clock.now, retireOld: true)
            } after: { restarted in
                let (plain, retiring) = (try #require(plain), try #require(retiring))
                #expect(plain.replaced == [first])
                // Both made in the same second: in no particular order.
                #expect(Set(retiring.replaced) == [first, plain.kid] && retiring.replaced.count == 2)
                #expect(retiring.replacedUnpublishedAt == nil)
                #expect(retiring.summary.contains("removed from the JWKS now (--retire-old)"), "\(retiring.summary)")
                #expect(try await Self.signer(restarted, session: session) == (retiring.kid, [retiring.kid]))
                #expect(restarted.accessTokenKeys.publishedKids == [retiring.kid])
            }
        }
    }

    /// The signing key opens only with the `data_key` that sealed it: a server given another
    /// key refuses to start, saying why, rather than answer every token request with a 500. So
    /// does one whose key's row publishes another key's JWK.
    @Test(arguments: DatabaseEngine.available)
    func aServerWhoseSigningKeyDoesNotOpenDoesNotStart(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine: engine) { $0.dataKey = [UInt8](repeating: 1, count: 32) }) { fixture in
            await fixture.harness.stopApplication()
            var configuration = fixture.application.configuration
            configuration.dataKey = [UInt8](repeating: 2, count: 32)
            #expect {
                _ = try Application(configuration: configuration, accessLogSink: fixture.harness.sink)
            } throws: { error in
                "\(error)".contains("does not open with this data_key")
            }

            // With the right data_key but a published JWK that is another key's, it does not sign
            // either: a token it signed would not verify against the JWKS.
            configuration.dataKey = [UInt8](repeating: 1, count: 32)
            let (store, _) = try Store.open(configuration, connections: 1, logger: Logger(label: "test"))
            let other = try P256JSONWebKey(try P256PrivateKey.generate().publicKey)
            try StoreSQL(store).writeAndWait { connection in
                let kid = try #require(try connection.queryOne("SELECT kid FROM signing_keys", [])?.string(0))
                try connection.run("UPDATE signing_keys SET public_jwk = ?", [.text(JSONWriter.string(other.json(kid: kid)))])
            }
            store.close()
            #expect {
                _ = try Application(configuration: configuration, accessLogSink: fixture.harness.sink)
            } throws: { error in
                "\(error)".contains("its published JWK is not its own")
            }
        }
    }
}
