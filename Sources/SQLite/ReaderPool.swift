import Synchronization

/// Read-only connections for `Database.read`. A reader is checked out for one read and back in
/// after it; when every reader is busy another one is opened rather than making the caller wait,
/// and at most `capacity` idle readers are kept.
final class ReaderPool: Sendable {
    /// Sendable by confinement: a pooled connection is touched only by the one thread that
    /// checked it out; while idle in the pool nobody uses it.
    private struct Pooled: @unchecked Sendable {
        let connection: Connection
    }

    private struct State {
        var idle: [Pooled]
        var isClosed = false
    }

    private let state: Mutex<State>
    private let capacity: Int
    private let path: String
    private let open: @Sendable () throws -> Connection

    init(path: String, capacity: Int, open: @escaping @Sendable () throws -> Connection) {
        self.path = path
        self.capacity = max(0, capacity)
        self.open = open
        var idle: [Pooled] = []
        idle.reserveCapacity(self.capacity)
        state = Mutex(State(idle: idle))
    }

    func withConnection<T>(_ body: (Connection) throws -> T) throws -> T {
        let pooled = try checkOut()
        defer { checkIn(pooled) }
        return try body(pooled.connection)
    }

    /// Closes the idle readers; busy ones are closed when they come back.
    func close() {
        let idle = state.withLock { state in
            state.isClosed = true
            let idle = state.idle
            state.idle = []
            return idle
        }
        for pooled in idle { pooled.connection.close() }
    }

    private func checkOut() throws -> Pooled {
        let (isClosed, pooled) = state.withLock { state in
            (state.isClosed, state.isClosed ? nil : state.idle.popLast())
        }
        if isClosed { throw SQLiteError.closed(path) }
        if let pooled { return pooled }
        return Pooled(connection: try open())
    }

    private func checkIn(_ pooled: Pooled) {
        let kept = state.withLock { state in
            guard !state.isClosed, state.idle.count < capacity else { return false }
            state.idle.append(pooled)
            return true
        }
        if !kept { pooled.connection.close() }
    }
}
