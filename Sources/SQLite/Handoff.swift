import SystemThread

/// Carries a result from the writer thread to a caller blocked in `Database.writeAndWait`.
final class Handoff<T>: @unchecked Sendable {
    // Sendable because `result` is only touched while holding `condition`, and the value moves
    // from the writer thread to the single blocked caller, never shared.
    private let condition = Condition()
    private var result: Result<T, any Error>?

    func deliver(_ result: Result<T, any Error>) {
        condition.withLock {
            self.result = result
            condition.signal()
        }
    }

    func wait() -> Result<T, any Error> {
        condition.withLock {
            while true {
                if let result { return result }
                condition.wait()
            }
        }
    }
}
