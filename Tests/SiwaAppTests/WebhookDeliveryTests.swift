import AppleSimulator
import Foundation
import JSON
import OpenSSLCrypto
import Store
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp

/// Webhook delivery (docs/guides/connecting-your-backend.md) from the assembled application (in process, on both
/// engines) to a receiver on a loopback socket: signatures checked by the receiver's own HMAC and by `standardwebhooks`, the outbox's
/// atomicity seen from outside, order per user, back-off and retention on a held clock, a
/// hanging receiver, and two instances on one PostgreSQL database.
@Suite(.timeLimit(.minutes(2)))
struct WebhookDeliveryTests {
    typealias Engine = DatabaseEngine


    /// An application whose `webhook_url` is `receiver`'s, on `engine`.
    final class Fixture: Stoppable {
        let receiver: WebhookReceiver
        let harness: TestApp

        init(
            _ engine: Engine = .sqlite, clock: HeldClock? = nil, backoff: Duration = .seconds(1), retention: Duration = .seconds(3 * 86_400),
            database: String? = nil, receiver: WebhookReceiver? = nil, script: @escaping WebhookReceiver.Script = { _, _ in .status(200) },
            configure: (inout Configuration) -> Void = { _ in }
        ) async throws {
            let receiver = try receiver ?? WebhookReceiver(script: script)
            self.receiver = receiver
            harness = try await TestApp(engine: engine, clock: clock) {
                $0.clientIDs = [NativeSignInTests.app]
                $0.webhookURL = receiver.url
                $0.webhookSecret = receiver.secretBytes
                $0.webhookBackoff = backoff
                $0.webhookRetention = retention
                // Another instance's database, shared.
                if let database { $0.database = database }
                configure(&$0)
            }
        }

        var store: Store { harness.application.store }

        /// A user made as a sign-in makes one (one `user.created`), at `now`; its session token.
        func user(_ sub: String, now: Int64) async throws -> (id: String, session: String) {
            let write = SignInWrite(
                identity: VerifiedIdentity(appleSub: sub, email: "\(sub)@example.com", emailVerified: true),
                tokenHash: SHA256.hash("token of \(sub) at \(now) \(UUID())"), tokenExpiresAt: now + 600, sessionTTL: 86_400)
            let signedIn = try await store.completeSignIn(write, now: now)
            return (signedIn.user.id, signedIn.session.token)
        }

        /// One `user.updated`, the external id becoming `value`.
        func update(_ userID: String, to value: String, now: Int64) async throws {
            _ = try await store.setExternalID(userID: userID, externalID: value, now: now)
        }

        /// `POST /api/auth/apple` with a fresh identity token (and, with `code`, its code).
        func signInOverHTTP(_ sub: String, email: String? = nil, replaying token: String? = nil) async throws -> (status: Int, json: JSONObject?, token: String) {
            let identityToken = try token ?? harness.simulator.issueCode(sub: sub, clientID: NativeSignInTests.app, nonce: "n", email: email).identityToken
            let text = JSONWriter.string(.object(JSONObject([("identity_token", .string(identityToken)), ("nonce", .string("n"))])))
            let reply = try await harness.send(.post, "/api/auth/apple", headers: [("Content-Type", "application/json")], body: text)
            return (reply.status, reply.json, identityToken)
        }

        func deleteAccount(session: String) async throws -> Int {
            try await harness.send(.delete, "/api/account", bearer: session).status
        }

        func metrics() async throws -> String { try await harness.get("/metrics").body }

        /// Until `/metrics` has `line` (an outcome is counted once it is recorded in the queue).
        func waitForMetric(_ line: String) async throws -> Bool {
            try await eventually { try await metrics().contains(line) }
        }

        /// Until nothing waits in the outbox (every event delivered or failed).
        func waitUntilQueueIsEmpty() async throws -> Bool { try await waitUntilQueueHolds(0) }

        /// Until `count` events wait in the outbox (a delivery is recorded just after the
        /// receiver answers).
        func waitUntilQueueHolds(_ count: Int) async throws -> Bool {
            try await eventually { try await store.webhooks.depth().count == count }
        }

        func stop() async {
            receiver.release()
            await harness.stop()
            receiver.stop()
        }
    }

    static func sub(_ n: Int) -> String { "000900.\(String(repeating: "0", count: 29))\(100 + n).0900" }

    // MARK: - Format and signatures

    @Test(.enabled(if: PythonTools.testsEnabled, "needs .build-py with standardwebhooks"), arguments: DatabaseEngine.available)
    func everyEventIsSignedAndVerifiesWithAnIndependentHMACAndWithStandardWebhooks(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            _ = try await fixture.harness.waitUntilReady()
            let sub = Self.sub(1)
            let signIn = try await fixture.signInOverHTTP(sub, email: "ada@example.com")
            #expect(signIn.status == 200)
            let userID = try #require(signIn.json?["user"]?.object?["id"]?.string)
            let session = try #require(signIn.json?["session"]?.object?["token"]?.string)
            let notified = try await fixture.harness.simulator.notify(
                NotificationEvent(type: "email-disabled", sub: sub, email: "ada@example.com", clientID: NativeSignInTests.app),
                to: "http://127.0.0.1:\(fixture.harness.application.port)/apple/notifications")
            #expect(notified.status == 200)
            #expect(try await fixture.deleteAccount(session: session) == 202)

            #expect(await fixture.receiver.wait { $0.filter(\.accepted).count == 5 })
            let deliveries = fixture.receiver.deliveries
            // The session the sign-in made, and its end when the account goes, among the user's.
            #expect(deliveries.map(\.type) == ["user.created", "session.created", "user.updated", "session.ended", "user.deleted"])
            let now = Int64(Date().timeIntervalSince1970)
            for delivery in deliveries {
                #expect(delivery.method == "POST" && delivery.path == "/hooks/siwa")
                #expect(delivery.header("content-type") == "application/json")
                #expect(delivery.id.hasPrefix("msg_"))
                #expect(abs((delivery.timestamp ?? 0) - now) < 120)
                #expect(delivery.signatureVerifies, "HMAC of \(delivery.id)")
                let json = try #require(delivery.json)
                if delivery.type.hasPrefix("session.") {
                    #expect((json["data"] as? [String: Any])?["user_id"] as? String == userID)
                } else {
                    #expect(delivery.userID == userID)
                }
                #expect(Set(json.keys) == ["type", "timestamp", "data"])
                #expect((json["timestamp"] as? String)?.hasSuffix("Z") == true)
            }
            #expect(Set(deliveries.map(\.id)).count == 5, "one webhook-id per event")
            let created = try #require(deliveries.first?.json?["data"] as? [String: Any])
            #expect(created["email"] as? String == "ada@example.com")
            #expect(created["apple_sub"] as? String == sub)
            let deleted = try #require(deliveries.last?.json?["data"] as? [String: Any])
            #expect(deleted["reason"] as? String == "account_deleted")
            #expect(Set(deleted.keys) == ["id", "apple_sub", "external_id", "reason"])

            #expect(try await fixture.receiver.verifyWithStandardWebhooks() == 5)
            #expect(try await fixture.waitUntilQueueIsEmpty())
            #expect(try await fixture.waitForMetric(#"siwa_webhook_deliveries_total{type="user.deleted",outcome="delivered"} 1"#))
            let metrics = try await fixture.metrics()
            #expect(metrics.contains(#"siwa_webhook_deliveries_total{type="user.created",outcome="delivered"} 1"#))
            #expect(metrics.contains("siwa_webhook_queue_depth "))
            #expect(metrics.contains("siwa_webhook_oldest_age_seconds "))
        }
    }

    /// The outbox seen from outside: what a refused request attempted never reaches the
    /// receiver, and what was committed always does (the outbox is the only way out, and it
    /// ends empty with exactly these events delivered).
    @Test(arguments: DatabaseEngine.available)
    func aChangeThatFailsEmitsNothingAndOneThatCommitsAlwaysEmits(_ engine: DatabaseEngine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            _ = try await fixture.harness.waitUntilReady()
            let first = try await fixture.signInOverHTTP(Self.sub(2))
            #expect(first.status == 200)
            let session = try #require(first.json?["session"]?.object?["token"]?.string)
            // A replayed token, a refused code, a deletion without a session: no change, no event.
            #expect(try await fixture.signInOverHTTP(Self.sub(2), replaying: first.token).status == 401)
            let issued = try fixture.harness.simulator.issueCode(sub: Self.sub(3), clientID: NativeSignInTests.app, nonce: "n")
            fixture.harness.simulator.injectFault(SimulatorFault(endpoint: .token, status: 400, error: "invalid_grant"))
            let text = JSONWriter.string(.object(JSONObject([
                ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
            ])))
            let refused = try await fixture.harness.send(.post, "/api/auth/apple", headers: [("Content-Type", "application/json")], body: text)
            #expect(refused.status == 401)
            #expect(try await fixture.deleteAccount(session: "not-a-session") == 401)
            #expect(try await fixture.deleteAccount(session: session) == 202)

            #expect(try await fixture.waitUntilQueueIsEmpty())
            #expect(await fixture.receiver.wait { $0.count == 4 })
            #expect(fixture.receiver.deliveries.map(\.type) == ["user.created", "session.created", "session.ended", "user.deleted"])
            #expect(fixture.receiver.deliveries.allSatisfy { $0.accepted })
            #expect(try await fixture.store.webhooks.failed().isEmpty)
        }
    }

    // MARK: - Order, retries, retention

    @Test(arguments: Engine.available)
    func eachUsersEventsArriveInOrderAndOtherUsersDoNotWait(_ engine: Engine) async throws {
        let clock = HeldClock(Int64(Date().timeIntervalSince1970))
        let adaSub = Self.sub(4)
        // The first delivery about Ada is refused; everything else is accepted.
        let refusedAda = Mutex(false)
        try await withFixture(Fixture(engine, clock: clock, backoff: .seconds(10)) { delivery, _ in
            guard (delivery.json?["data"] as? [String: Any])?["apple_sub"] as? String == adaSub else { return .status(200) }
            return refusedAda.withLock { refused in
                defer { refused = true }
                return refused ? .status(204) : .status(500)
            }
        }) { fixture in
            let t = clock.now
            let ada = try await fixture.user(adaSub, now: t)
            for step in 1...3 { try await fixture.update(ada.id, to: "ada-\(step)", now: t) }
            let bob = try await fixture.user(Self.sub(5), now: t)
            try await fixture.update(bob.id, to: "bob-1", now: t)

            // Bob's two events arrive while Ada's first waits for its retry, and her later ones
            // behind it: not one of them is sent.
            #expect(await fixture.receiver.wait { deliveries in
                deliveries.filter { $0.userID == bob.id && $0.accepted }.count == 2 && deliveries.contains { $0.userID == ada.id }
            })
            #expect(try await fixture.waitUntilQueueHolds(5), "Ada's four events and her session.created wait")
            #expect(try await fixture.waitForMetric(#"siwa_webhook_deliveries_total{type="user.created",outcome="retry"} 1"#))
            #expect(try await fixture.store.webhooks.hasDue(now: t) == false, "nothing to claim until the clock reaches Ada's retry")
            #expect(try await fixture.store.webhooks.hasDue(now: t + 12), "…which is due within webhook_backoff + 20 %")
            #expect(fixture.receiver.deliveries.filter { $0.userID == ada.id }.map(\.answer) == [.status(500)])
            #expect(fixture.receiver.deliveries.filter { $0.userID == bob.id }.map(\.type) == ["user.created", "user.updated"])

            clock.advance(by: 13)
            #expect(await fixture.receiver.wait { $0.filter { $0.userID == ada.id && $0.accepted }.count == 4 })
            let adas = fixture.receiver.deliveries.filter { $0.userID == ada.id }
            #expect(adas.count == 5)
            #expect(adas[0].id == adas[1].id, "the retry carries the same webhook-id")
            #expect(adas[1].timestamp == t + 13 && adas[0].timestamp == t, "webhook-timestamp is the attempt's")
            let externalIDs = adas.dropFirst().map { ($0.json?["data"] as? [String: Any])?["external_id"] as? String ?? "-" }
            #expect(externalIDs == ["-", "ada-1", "ada-2", "ada-3"])
            #expect(fixture.receiver.deliveries.allSatisfy { $0.signatureVerifies })
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func aReceiverAnswering500ThreeTimesThen200GetsTheEventOnceMoreEachTimeAndThenItIsDone(_ engine: DatabaseEngine) async throws {
        let clock = HeldClock(Int64(Date().timeIntervalSince1970))
        try await withFixture(Fixture(engine, clock: clock, backoff: .seconds(10)) { _, index in index < 3 ? .status(500) : .status(200) }) { fixture in
            let t0 = clock.now
            _ = try await fixture.user(Self.sub(6), now: t0)
            let queue = fixture.store.webhooks
            for attempt in 1...3 {
                #expect(await fixture.receiver.wait { $0.count == attempt })
                // Recorded: due again after webhook_backoff doubled per attempt, ±20 %.
                let base = Int64(10 << (attempt - 1))
                #expect(try await fixture.waitForMetric(#"siwa_webhook_deliveries_total{type="user.created",outcome="retry"} \#(attempt)"#))
                #expect(try await queue.hasDue(now: clock.now + base * 8 / 10 - 1) == false)
                #expect(try await queue.hasDue(now: clock.now + base * 12 / 10))
                #expect(fixture.receiver.deliveries.count == attempt, "nothing more before the clock moves")
                clock.advance(by: base * 12 / 10)
            }
            #expect(await fixture.receiver.wait { $0.count == 5 })
            #expect(try await fixture.waitUntilQueueIsEmpty())
            // The session's event follows its user's, once that is delivered.
            #expect(fixture.receiver.deliveries.last?.type == "session.created")
            let deliveries = fixture.receiver.deliveries.filter { $0.type == "user.created" }
            #expect(deliveries.map(\.answer) == [.status(500), .status(500), .status(500), .status(200)])
            #expect(Set(deliveries.map(\.id)).count == 1)
            #expect(Set(deliveries.map(\.body)).count == 1, "every retry sends the same body")
            #expect(deliveries.map { $0.timestamp ?? 0 } == [t0, t0 + 12, t0 + 36, t0 + 84])
            #expect(deliveries.allSatisfy { $0.signatureVerifies })
            if PythonTools.testsEnabled { #expect(try await fixture.receiver.verifyWithStandardWebhooks(anyTimestamp: true) == 5) }

            // Done: however far the clock moves, nothing more is sent.
            clock.advance(by: 86_400)
            #expect(try await queue.hasDue(now: clock.now) == false)
            #expect(try await queue.failed().isEmpty)
            #expect(try await fixture.waitForMetric(#"siwa_webhook_deliveries_total{type="user.created",outcome="delivered"} 1"#))
            let metrics = try await fixture.metrics()
            #expect(metrics.contains(#"siwa_webhook_deliveries_total{type="user.created",outcome="retry"} 3"#))
            #expect(fixture.receiver.deliveries.count == 5)
        }
    }

    @Test(arguments: DatabaseEngine.available)
    func afterTheRetentionAnEventIsFailedAndTheUsersNextEventGoesOn(_ engine: DatabaseEngine) async throws {
        let clock = HeldClock(Int64(Date().timeIntervalSince1970))
        try await withFixture(Fixture(engine, clock: clock, backoff: .seconds(10), retention: .seconds(60)) { delivery, _ in
            delivery.type == "user.created" ? .status(503) : .status(200)
        }) { fixture in
            let t0 = clock.now
            let cy = try await fixture.user(Self.sub(7), now: t0)
            try await fixture.update(cy.id, to: "cy-1", now: t0)
            let database = StoreSQL(fixture.harness.application.store)
            let first = try #require(try database.read { try $0.queryOne("SELECT id FROM webhook_events ORDER BY seq", [])?.string(0) })
            func row() throws -> (attempts: Int, next: Int64, failed: Int64?) {
                try database.read { connection in
                    let row = try #require(try connection.queryOne("SELECT attempts, next_attempt_at, failed_at FROM webhook_events WHERE id = ?", [.text(first)]))
                    return (try row.int(0), try row.int64(1), try row.optionalInt64(2))
                }
            }

            // Each attempt, once recorded, moves the clock to the next: until the retention ends.
            var attempts = 0
            while try row().failed == nil, attempts < 10 {
                attempts += 1
                #expect(try await eventually { try row().attempts == attempts })
                let state = try row()
                if state.failed == nil {
                    #expect(state.next <= t0 + 60, "no attempt is put after the retention")
                    clock.advance(by: state.next - clock.now)
                }
            }
            let state = try row()
            #expect(state.failed == t0 + 60, "failed at the end of the retention")
            #expect((4...5).contains(state.attempts))
            #expect(fixture.receiver.deliveries.filter { $0.type == "user.created" }.count == state.attempts)

            // Failed, it holds Cy's next event back no longer.
            #expect(await fixture.receiver.wait { $0.contains { $0.type == "user.updated" && $0.accepted } })
            let failed = try await fixture.store.webhooks.failed()
            #expect(failed.map(\.id) == [first])
            #expect(failed.first?.lastError == "HTTP 503")
            #expect(failed.first?.userID == cy.id)
            #expect(try await fixture.waitForMetric(#"siwa_webhook_deliveries_total{type="user.created",outcome="failed"} 1"#))
            #expect(try await fixture.waitForMetric(#"siwa_webhook_deliveries_total{type="user.updated",outcome="delivered"} 1"#))
        }
    }

    // MARK: - A receiver that hangs

    /// No timed assertion: the receiver holds Ada's delivery unanswered, and the requests and
    /// Bob's delivery are checked to have completed before that hold ended (the deliverer gives
    /// up at its attempt deadline, here a minute so a loaded machine cannot blur "during"; the
    /// back-off is long, so there is one hold only).
    @Test(arguments: DatabaseEngine.available)
    func aHangingReceiverSlowsNeitherRequestsNorOtherUsersEvents(_ engine: DatabaseEngine) async throws {
        let adaSub = Self.sub(8)
        let script: WebhookReceiver.Script = { delivery, _ in
            (delivery.json?["data"] as? [String: Any])?["apple_sub"] as? String == adaSub ? .hang : .status(200)
        }
        try await withFixture(Fixture(engine, backoff: .seconds(600), script: script) { $0.webhookAttemptDeadline = .seconds(60) }) { fixture in
            let now = Int64(Date().timeIntervalSince1970)
            let ada = try await fixture.user(adaSub, now: now)
            #expect(await fixture.receiver.wait { _ in fixture.receiver.hanging == 1 })

            for _ in 0..<3 {
                #expect(try await fixture.harness.get("/api/me", headers: ["Authorization": "Bearer \(ada.session)"]).status == 200)
            }
            #expect(fixture.receiver.holdsEnded == 0, "every /api/me was served while the receiver held Ada's delivery")
            let bob = try await fixture.user(Self.sub(9), now: now)
            #expect(await fixture.receiver.wait { $0.contains { $0.userID == bob.id && $0.accepted } })
            #expect(fixture.receiver.holdsEnded == 0, "Bob's event was delivered while the receiver held Ada's")
            let adaAnswers = fixture.receiver.deliveries.filter { $0.userID == ada.id }.map(\.answer)
            #expect(adaAnswers == [.hang])
            // The hold ends here rather than at the minute's deadline, so stopping does not wait.
            fixture.receiver.release()
        }
    }

    // MARK: - Several instances

    @Test(.enabled(if: PostgresCluster.testsEnabled, "PostgreSQL is not installed (Scripts/install-packages installs it)"))
    func twoInstancesOnPostgreSQLDeliverEachEventOnceAndInOrder() async throws {
        let url = try await PostgresCluster.shared().makeDatabase()
        let receiver = try WebhookReceiver()
        try await withFixture(Fixture(.postgres, database: url, receiver: receiver)) { a in
            try await withFixture(Fixture(.postgres, database: url, receiver: receiver)) { b in
                let now = Int64(Date().timeIntervalSince1970)
                var expected: [String: [String]] = [:]
                // Both instances write, and both deliver, while the events are being made.
                for index in 0..<12 {
                    let user = try await (index % 2 == 0 ? a : b).user(Self.sub(20 + index), now: now)
                    var values = ["-"]
                    for step in 1...4 {
                        // One user's changes come from both instances.
                        try await (step % 2 == 0 ? a : b).update(user.id, to: "\(user.id)-\(step)", now: now)
                        values.append("\(user.id)-\(step)")
                    }
                    expected[user.id] = values
                }
                #expect(await receiver.wait(seconds: 60) { $0.count >= 72 })
                #expect(try await a.waitUntilQueueIsEmpty())
                await a.harness.stop()
                await b.harness.stop()
                let deliveries = receiver.deliveries
                #expect(deliveries.count == 72, "12 users × 5 events and a session.created, each once")
                #expect(Set(deliveries.map(\.id)).count == deliveries.count)
                for (user, values) in expected {
                    let received = deliveries.filter { $0.userID == user }.map { ($0.json?["data"] as? [String: Any])?["external_id"] as? String ?? "-" }
                    #expect(received == values, "in order for \(user)")
                }
                #expect(deliveries.allSatisfy { $0.signatureVerifies })
            }
        }
        receiver.stop()
    }
}
