import Foundation
import Synchronization
import Testing
import TestSupport
import WireFormat
@testable import Passwords

@Suite struct PasswordHasherTests {
    /// Cheap parameters where the test is about the pool, not the cost.
    static let cheap = ScryptParameters(logN: 10, r: 8, p: 1)

    @Test func aHashVerifiesItsPasswordAndNoOther() async throws {
        let hasher = try PasswordHasher(threads: 2)
        defer { hasher.stop() }
        let stored = try await hasher.hash("correct horse battery")
        #expect(stored.hasPrefix("$scrypt$ln=15,r=8,p=1$"))
        #expect(try await hasher.verify("correct horse battery", against: stored) == .init(matches: true, needsRehash: false))
        #expect(try await hasher.verify("correct horse batterY", against: stored).matches == false)
        // A fresh salt every time.
        #expect(try await hasher.hash("correct horse battery") != stored)
    }

    @Test func noAccountAndAnUnreadableHashNeverMatch() async throws {
        let hasher = try PasswordHasher(parameters: Self.cheap, threads: 1)
        defer { hasher.stop() }
        #expect(try await hasher.verify("anything at all", against: nil) == .init(matches: false, needsRehash: false))
        #expect(try await hasher.verify("anything at all", against: "$2b$10$notscrypt") == .init(matches: false, needsRehash: false))
    }

    @Test func aHashOfOlderParametersMatchesAndAsksToBeRedone() async throws {
        let old = try PasswordHasher.derive("correct horse battery", parameters: Self.cheap).description
        let hasher = try PasswordHasher(threads: 1)
        defer { hasher.stop() }
        #expect(try await hasher.verify("correct horse battery", against: old) == .init(matches: true, needsRehash: true))
        #expect(try await hasher.verify("wrong horse battery", against: old).matches == false)
    }

    @Test func pythonsHashlibScryptDerivesTheSameHash() async throws {
        guard PythonTools.testsEnabled else { return }
        let stored = try PasswordHasher.derive("pässwörd with ünïcode", parameters: .current).description
        let script = """
            import base64, hashlib, hmac, sys
            _, name, params, salt, expected = sys.argv[2].split("$")
            assert name == "scrypt"
            p = dict(kv.split("=") for kv in params.split(","))
            b64 = lambda s: base64.b64decode(s + "=" * (-len(s) % 4), validate=True)
            out = hashlib.scrypt(sys.argv[1].encode(), salt=b64(salt), n=2 ** int(p["ln"]), r=int(p["r"]), p=int(p["p"]),
                                 maxmem=64 * 1024 * 1024, dklen=len(b64(expected)))
            print("match" if hmac.compare_digest(out, b64(expected)) else "differ")
            """
        #expect(try await PythonTools.run(script, ["pässwörd with ünïcode", stored]) == "match\n")
    }

    @Test func atMostThreadsHashAtOnceAndAFullQueueIsRefused() async throws {
        let hasher = try PasswordHasher(parameters: .current, threads: 2, queueCapacity: 3)
        defer { hasher.stop() }
        let running = Running()
        // A burst of 12: at most 2 run and 3 wait at any moment, so some are refused at once.
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<12 {
                group.addTask {
                    let done: Bool? = try? await hasher.run {
                        running.enter()
                        defer { running.leave() }
                        _ = try PasswordHasher.derive("correct horse battery", parameters: .current)
                        return true
                    }
                    return done != nil
                }
            }
            var outcomes: [Bool] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(running.most == 2)
        #expect((3...5).contains(outcomes.filter { $0 }.count))
        #expect(outcomes.contains(false))
        #expect(await (try? hasher.hash("after the burst")) != nil)
    }

    @Test func afterStopEveryCallIsRefused() async throws {
        let hasher = try PasswordHasher(parameters: Self.cheap, threads: 1)
        hasher.stop()
        hasher.stop()
        await #expect(throws: PasswordHasher.Busy.self) { try await hasher.hash("correct horse battery") }
    }
}

/// How many jobs run at once, and the most that ever did.
final class Running: Sendable {
    private let state = Mutex((now: 0, most: 0))

    func enter() {
        state.withLock { $0.now += 1; $0.most = max($0.most, $0.now) }
    }

    func leave() {
        state.withLock { $0.now -= 1 }
    }

    var most: Int { state.withLock { $0.most } }
}
