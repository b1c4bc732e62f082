import Foundation
import JSON
import Logging
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp
@testable import Store

/// docs/guides/passwords-and-email.md: a reset request is answered alike, in body and in time, whether or not the email
/// has an account. The answer does not wait for the lookup: the work runs on a bounded queue
/// after it. A gate holds that work, so each test proves the order without measuring time.
@Suite(.timeLimit(.minutes(3)))
struct EmailRequestQueueTests {
    typealias Engine = DatabaseEngine
    typealias Fixture = EmailVerificationFixture
    static let reset = "user.password_reset_requested"

    // MARK: - Over the wire, both engines

    /// With the work held, a known and an unknown email both get their 202 and nothing is
    /// looked up yet; once the gate opens, only the known one gets a code.
    @Test(arguments: Engine.available)
    func theAnswerDoesNotWaitForTheLookup(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            let queue = fixture.harness.application.emailRequests
            let gate = Gate()
            queue.holdEachJob { await gate.wait("work") }

            let known = try await fixture.requestReset("ADA@example.com")
            let unknown = try await fixture.requestReset("nobody@example.com")
            #expect(known.status == 202 && unknown.status == 202)
            #expect(known.body == unknown.body && known.body == #"{"status":"accepted"}"#)
            // Both were answered while their work had not run.
            #expect(queue.outstanding == 2)
            #expect(try await fixture.count("password_reset_codes") == 0)
            #expect(try await fixture.count("webhook_events", "type = '\(Self.reset)'") == 0)

            gate.open("work")
            let codes = try await fixture.codes(Self.reset, 1)
            #expect(codes.first?["email"] == "ada@example.com")
            await queue.idle()
            #expect(try await fixture.count("password_reset_codes") == 1, "nothing for the unknown email")
            #expect(queue.outcomes.count("done") == 2 && queue.outcomes.count("dropped") == 0)
        }
    }

    /// The queue full: one more request is answered as every other and its work dropped and
    /// counted; nothing waits for room.
    @Test(arguments: Engine.available)
    func aFullQueueDropsTheWorkAndAnswersAlike(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            let queue = fixture.harness.application.emailRequests
            let gate = Gate()
            queue.holdEachJob { await gate.wait("work") }
            queue.setCapacity(1)

            // Every running slot held at the gate, then one job waiting: the queue is full.
            let running = EmailRequestQueue.defaultConcurrency
            for n in 0..<running {
                #expect(try await fixture.requestReset("nobody\(n)@example.com").status == 202)
                // Taken from the queue (and held) before the next comes: the queue holds one.
                #expect(try await eventually { gate.waiting("work") == n + 1 })
            }
            let queued = try await fixture.requestReset("somebody@example.com")
            let dropped = try await fixture.requestReset("ada@example.com")
            #expect(queued.status == 202 && dropped.status == 202 && dropped.body == queued.body)
            #expect(queue.outcomes.count("dropped") == 1)
            let metrics = try await fixture.harness.get("/metrics")
            #expect(metrics.body.contains(#"siwa_email_requests_total{outcome="dropped"} 1"#))

            gate.open("work")
            await queue.idle()
            #expect(queue.outcomes.count("done") == running + 1)
            #expect(try await fixture.count("password_reset_codes") == 0, "the dropped request's code was never made")
            // Room again: the next request for the same email gets its code.
            #expect(try await fixture.requestReset("ada@example.com").status == 202)
            #expect(try await fixture.codes(Self.reset, 1).first?["email"] == "ada@example.com")
        }
    }

    /// A graceful stop runs the work of the requests already answered before the database
    /// closes.
    @Test(arguments: Engine.available)
    func aGracefulStopDrainsTheQueue(_ engine: Engine) async throws {
        try await withFixture(Fixture(engine)) { fixture in
            _ = try await fixture.signUp("ada@example.com")
            let application = fixture.harness.application
            let queue = application.emailRequests
            let gate = Gate()
            queue.holdEachJob { await gate.wait("work") }
            for email in ["ada@example.com", "nobody@example.com", "Ada@Example.com"] {
                #expect(try await fixture.requestReset(email).status == 202)
            }
            #expect(queue.outstanding == 3)

            let stopped = Task { await fixture.harness.stopApplication() }
            // The server no longer answers; the stop waits on the queue.
            #expect(try await eventually { !queue.isAccepting })
            #expect(queue.outstanding == 3)
            gate.open("work")
            await stopped.value
            #expect(queue.outcomes.count("done") == 3 && queue.outcomes.count("dropped") == 0)

            // What the stopped server left in its database.
            let (store, _) = try Store.open(application.configuration, connections: 1, logger: Logger(label: "test"))
            let codes = try await store.engine.read { try $0.queryOne("SELECT COUNT(*) FROM password_reset_codes")?.int(0) }
            store.close()
            #expect(codes == 2, "both of Ada's requests made their code")
        }
    }

    // MARK: - The queue alone

    /// The drain's bound: a job that never ends does not hold the stop; what is still queued is
    /// dropped and counted, and nothing is taken afterwards.
    @Test func theDrainGivesUpAtItsBound() async throws {
        let outcomes = LabeledCounter(name: "t", help: "t", label: "outcome")
        let queue = EmailRequestQueue(capacity: 8, concurrency: 1, outcomes: outcomes, logger: Logger(label: "test"))
        let gate = Gate()
        queue.holdEachJob { await gate.wait("work") }
        queue.start()
        let ran = Mutex(0)
        for _ in 0..<3 { #expect(queue.submit("test") { ran.withLock { $0 += 1 } }) }
        #expect(try await eventually { gate.waiting("work") == 1 })

        #expect(await queue.drain(within: .milliseconds(50)) == 2)
        #expect(outcomes.count("dropped") == 2)
        #expect(!queue.submit("test") { ran.withLock { $0 += 1 } }, "a stopping queue takes nothing")
        #expect(outcomes.count("dropped") == 3)
        // The held job finishes on its own; the dropped ones never run.
        gate.open("work")
        await queue.idle()
        #expect(ran.withLock { $0 } == 1)
        #expect(queue.outstanding == 0)
    }

    /// A job that throws (the database away) is counted as failed and the next one runs.
    @Test func aFailedJobIsCountedAndTheNextRuns() async throws {
        struct Away: Error {}
        let outcomes = LabeledCounter(name: "t", help: "t", label: "outcome")
        let queue = EmailRequestQueue(capacity: 8, concurrency: 1, outcomes: outcomes, logger: Logger(label: "test"))
        queue.start()
        #expect(queue.submit("test") { throw Away() })
        #expect(queue.submit("test") {})
        await queue.idle()
        #expect(outcomes.count("failed") == 1 && outcomes.count("done") == 1)
        #expect(await queue.drain() == 0)
    }
}
