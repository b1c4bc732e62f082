import Testing
import TestSupport
@testable import SiwaApp

/// The token bucket of `rate_limit`, with a held clock.
@Suite struct ClientRateLimiterTests {
    @Test func aBurstOfTheLimitThenOneEachRefillInterval() {
        let clock = HeldClock(1_000)
        let limiter = ClientRateLimiter(limit: RateLimit(requests: 5, perSeconds: 60), clock: { Double(clock.now) })
        for _ in 0..<5 { #expect(limiter.decide(clientAddress: "192.0.2.1") == .allowed) }
        #expect(limiter.decide(clientAddress: "192.0.2.1") == .limited(retryAfterSeconds: 12))
        // Another address has a bucket of its own.
        #expect(limiter.decide(clientAddress: "192.0.2.2") == .allowed)
        clock.advance(by: 11)
        #expect(limiter.decide(clientAddress: "192.0.2.1") == .limited(retryAfterSeconds: 1))
        clock.advance(by: 1)
        #expect(limiter.decide(clientAddress: "192.0.2.1") == .allowed)
        #expect(limiter.decide(clientAddress: "192.0.2.1") != .allowed)
        // A long quiet spell refills to the burst, never beyond it.
        clock.advance(by: 3_600)
        for _ in 0..<5 { #expect(limiter.decide(clientAddress: "192.0.2.1") == .allowed) }
        #expect(limiter.decide(clientAddress: "192.0.2.1") != .allowed)
    }

    @Test func ipv6ClientsAreCountedByTheirSlash64() {
        let limiter = ClientRateLimiter(limit: RateLimit(requests: 1, perSeconds: 3_600), clock: { 1_000 })
        #expect(limiter.decide(clientAddress: "2001:db8:1:2::1") == .allowed)
        #expect(limiter.decide(clientAddress: "2001:db8:1:2:ffff::9") != .allowed)
        #expect(limiter.decide(clientAddress: "[2001:db8:1:3::1]") == .allowed)
        // An IPv4 client seen through a socket bound to [::] is the same IPv4 client.
        #expect(limiter.decide(clientAddress: "192.0.2.7") == .allowed)
        #expect(limiter.decide(clientAddress: "::ffff:192.0.2.7") != .allowed)
    }

    @Test func theTableStaysBoundedDroppingRefilledBucketsFirst() {
        let clock = HeldClock(1_000)
        let limiter = ClientRateLimiter(limit: RateLimit(requests: 1, perSeconds: 10), maxClients: 100, clock: { Double(clock.now) })
        for index in 0..<100 { _ = limiter.decide(clientAddress: "10.0.0.\(index)") }
        clock.advance(by: 20)
        // Everyone above has refilled: the 101st client makes the table drop them.
        #expect(limiter.decide(clientAddress: "10.0.1.1") == .allowed)
        #expect(limiter.decide(clientAddress: "10.0.1.1") != .allowed)
        #expect(limiter.trackedClientCount == 1)
    }

    @Test func rateLimitSettingsParse() throws {
        #expect(try RateLimit.parse("600/m") == RateLimit(requests: 600, perSeconds: 60))
        #expect(try RateLimit.parse("10/s") == RateLimit(requests: 10, perSeconds: 1))
        #expect(try RateLimit.parse("1000/h") == RateLimit(requests: 1000, perSeconds: 3_600))
        #expect(try RateLimit.parse("0") == nil)
        for bad in ["", "600", "600/d", "-1/m", "0/m", "/m", "abc/m", "600/m/s", "99999999999/s"] {
            #expect(throws: RateLimit.Failure.self, "\(bad)") { try RateLimit.parse(bad) }
        }
    }
}
