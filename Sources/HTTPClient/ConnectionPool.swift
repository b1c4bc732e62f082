import Synchronization
import TLS

/// Idle keep-alive connections per scheme, host and port. A connection is checked out for one
/// exchange and checked back in only if the response left it clean. Expired connections are
/// closed whenever the pool is touched.
final class ConnectionPool: Sendable {
    private let idle = Mutex<[String: [ClientConnection]]>([:])
    private let maxPerKey: Int
    private let idleNanoseconds: UInt64

    init(maxPerKey: Int, idleTimeout: Duration) {
        self.maxPerKey = max(0, maxPerKey)
        idleNanoseconds = idleTimeout.wholeNanoseconds
    }

    /// The most recently used live connection for `key`, if any.
    func checkOut(_ key: String) -> ClientConnection? {
        while true {
            let (candidate, expired) = idle.withLock { pools -> (ClientConnection?, [ClientConnection]) in
                let expired = removeExpired(&pools)
                return (pools[key]?.popLast(), expired)
            }
            // Expired connections close here, outside the lock, as their references drop.
            _ = expired
            guard let candidate else { return nil }
            if candidate.isReusable() { return candidate }
        }
    }

    func checkIn(_ connection: ClientConnection, key: String) {
        connection.idleSince = Deadline.now.uptimeNanoseconds
        let (rejected, expired) = idle.withLock { pools -> (ClientConnection?, [ClientConnection]) in
            let expired = removeExpired(&pools)
            if pools[key, default: []].count < maxPerKey {
                pools[key, default: []].append(connection)
                return (nil, expired)
            }
            return (connection, expired)
        }
        _ = (rejected, expired)
    }

    func closeAll() {
        let all = idle.withLock { pools in
            defer { pools.removeAll() }
            return pools
        }
        _ = all
    }

    private func removeExpired(_ pools: inout [String: [ClientConnection]]) -> [ClientConnection] {
        let now = Deadline.now.uptimeNanoseconds
        var expired: [ClientConnection] = []
        for key in Array(pools.keys) {
            pools[key]!.removeAll { connection in
                // Saturating: CLOCK_MONOTONIC read on another CPU can be a few microseconds
                // behind the checkIn's reading (seen on VMs), and wrapping would call a
                // connection checked in a moment ago ancient.
                let old = now > connection.idleSince && now - connection.idleSince >= idleNanoseconds
                if old { expired.append(connection) }
                return old
            }
            if pools[key]!.isEmpty { pools[key] = nil }
        }
        return expired
    }
}

extension Duration {
    /// Non-negative whole nanoseconds.
    var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) &* 1_000_000_000 &+ UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
