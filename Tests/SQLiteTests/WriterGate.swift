import Dispatch
import Synchronization

/// Holds the writer thread inside a write body until the test opens the gate, so the test can
/// queue more writes behind it and know exactly what the next batch holds.
final class WriterGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let state = Mutex(false)

    /// Called on the writer thread, inside a write body.
    func block() {
        state.withLock { $0 = true }
        semaphore.wait()
    }

    var isEntered: Bool { state.withLock { $0 } }

    /// Safe to call more than once (a `defer` may open it again after the test did).
    func open() {
        semaphore.signal()
    }
}
