import SystemThread

/// Runs `body` on a thread of its own and returns its result.
///
/// Blocking work (socket reads, polling a child, waiting on a lock) must not sit on one of the
/// cooperative pool's two threads here: it starves every other test. And work that must happen
/// promptly belongs on its own thread too: while hundreds of tests start together, a task's
/// next turn on the pool can come seconds late.
public func onOwnThread<T: Sendable>(
    _ name: String = "test", _ body: @escaping @Sendable () throws -> T
) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try SystemThread.startDetached(name: name) { continuation.resume(with: Result { try body() }) }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
