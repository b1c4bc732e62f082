import Glibc
@testable import HTTPClient
import TLS
import Testing

@Suite struct ConnectionPoolTests {
    /// A connected pair of sockets; the pool's connection owns the first.
    private func connection() throws -> (ClientConnection, peer: Int32) {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (ClientConnection(fd: fds[0], tls: nil), fds[1])
    }

    @Test func aCheckedInConnectionComesBackOut() throws {
        let pool = ConnectionPool(maxPerKey: 2, idleTimeout: .seconds(30))
        let (connection, peer) = try connection()
        defer { close(peer) }
        pool.checkIn(connection, key: "k")
        #expect(pool.checkOut("k") === connection)
        #expect(pool.checkOut("k") == nil)
    }

    /// The monotonic clock read on another CPU may lag the check-in's reading by a little; the
    /// connection is then fresh, not 2^64 ns old (it was, and every reuse failed under load).
    @Test func aCheckInStampedAheadOfTheClockIsNotExpired() throws {
        let pool = ConnectionPool(maxPerKey: 2, idleTimeout: .seconds(30))
        let (connection, peer) = try connection()
        defer { close(peer) }
        pool.checkIn(connection, key: "k")
        connection.idleSince = Deadline.now.uptimeNanoseconds + 5_000_000
        #expect(pool.checkOut("k") === connection)
    }

    @Test func anIdleConnectionPastTheTimeoutIsClosedNotReused() throws {
        let pool = ConnectionPool(maxPerKey: 2, idleTimeout: .seconds(30))
        let (connection, peer) = try connection()
        defer { close(peer) }
        pool.checkIn(connection, key: "k")
        connection.idleSince = Deadline.now.uptimeNanoseconds - 31_000_000_000
        #expect(pool.checkOut("k") == nil)
    }

    @Test func aConnectionThePeerClosedIsNotReused() throws {
        let pool = ConnectionPool(maxPerKey: 2, idleTimeout: .seconds(30))
        let (connection, peer) = try connection()
        pool.checkIn(connection, key: "k")
        close(peer)
        #expect(pool.checkOut("k") == nil)
    }
}
