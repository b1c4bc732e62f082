/// Polls `condition` every 5 ms until it holds (true) or `timeout` passes (false), so that a
/// test waiting on another thread fails instead of hanging when that never happens.
func eventually(within timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        if ContinuousClock.now >= deadline { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}
