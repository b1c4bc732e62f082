/// Polls `condition` every 5 ms until it holds (true) or `timeout` passes (false), so that a
/// test waiting on another thread, process or server fails instead of hanging when that never
/// happens. The bound is for failure only: it is generous because a two-core machine running
/// the whole suite can delay any step by seconds, and a passing test never waits for it.
public func eventually(within timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}
