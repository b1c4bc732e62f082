import AppleSimulator
import Foundation
import JSON
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp

/// docs/RELIABILITY.md "Apple failing never stalls the server": while 32 sign-ins wait on a code exchange
/// Apple does not answer (the simulator holds the calls until the test lets them go),
/// `/api/me` and notifications are answered. The proof is ordering, not timing: every one of
/// those answers arrives before any of the 32 sign-ins has finished.
@Suite struct SlowAppleTests {
    @Test func meAndNotificationsAnswerWhile32SignInsWaitOnApple() async throws {
        // Apple's answer is held for as long as the test takes to look: the server's deadline
        // for it must not end the wait first.
        try await withFixture(NativeSignInTests.Fixture { $0.appleCallDeadline = .seconds(600) }) { fixture in
            let simulator = fixture.simulator
            let first = try simulator.issueCode(sub: "000800.0.0800", clientID: NativeSignInTests.app, nonce: "n").identityToken
            let session = try await #require(
                try fixture.signIn([("identity_token", .string(first)), ("nonce", .string("n"))]).json?["session"]?.object?["token"]?.string)

            let codes = try (0..<32).map { try simulator.issueCode(sub: "000801.\($0).0801", clientID: NativeSignInTests.app, nonce: "n") }
            let hold = SimulatorHold()
            defer { hold.open() }
            simulator.injectFault(SimulatorFault(endpoint: .token, count: 32, hold: hold))
            let finished = Atomic<Int>(0)
            let statuses = Mutex<[Int]>([])
            let group = DispatchGroup()
            let port = fixture.harness.application.port
            for issued in codes {
                group.enter()
                // Blocking sockets on threads of their own, not on the cooperative pool.
                Thread.detachNewThread {
                    let body = JSONWriter.string(.object(JSONObject([
                        ("identity_token", .string(issued.identityToken)), ("authorization_code", .string(issued.code)), ("nonce", .string("n")),
                    ])))
                    let reply = try? HTTPGet.rawBlocking(
                        port: port, "POST /api/auth/apple HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
                    finished.add(1, ordering: .sequentiallyConsistent)
                    statuses.withLock { $0.append(reply.map { Int($0.split(separator: " ").dropFirst().first ?? "") ?? 0 } ?? 0) }
                    group.leave()
                }
            }
            // Once all 32 are held at Apple, /api/me and a notification (blocking sockets, on a
            // thread of their own).
            #expect(try await eventually(within: .seconds(60)) { hold.holding == 32 }, "\(hold.holding) sign-ins at Apple")
            let notification = try simulator.notificationPayload(NotificationEvent(type: "email-disabled", sub: "000800.0.0800", clientID: NativeSignInTests.app))
            let probe: (waiting: Int, me: [Int], delivered: String, finishedMeanwhile: Int) = await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    let waiting = simulator.calls.filter { $0.endpoint == "token" }.count
                    let me = (0..<20).map { _ in
                        let reply = (try? HTTPGet.rawBlocking(port: port, "GET /api/me HTTP/1.1\r\nHost: t\r\nConnection: close\r\nAuthorization: Bearer \(session)\r\n\r\n")) ?? ""
                        return Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
                    }
                    let body = #"{"payload":""# + notification + #""}"#
                    let delivered = (try? HTTPGet.rawBlocking(
                        port: port, "POST /apple/notifications HTTP/1.1\r\nHost: t\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")) ?? ""
                    continuation.resume(returning: (waiting, me, delivered, finished.load(ordering: .sequentiallyConsistent)))
                }
            }
            let (waiting, meStatuses, delivered, finishedMeanwhile) = probe
            #expect(waiting == 32)
            #expect(meStatuses == Array(repeating: 200, count: 20))
            #expect(delivered.hasPrefix("HTTP/1.1 200 "))
            #expect(delivered.hasSuffix(#"{"status":"processed"}"#))
            #expect(finishedMeanwhile == 0, "sign-ins finished before the other answers: the server waited on Apple")
            hold.open()

            await withCheckedContinuation { continuation in
                group.notify(queue: .global()) { continuation.resume() }
            }
            #expect(statuses.withLock { $0 } == Array(repeating: 200, count: 32))
            #expect(try fixture.count("users") == 33)
        }
    }
}
