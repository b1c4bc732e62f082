import Foundation

/// Polls `condition` until it holds or `seconds` pass (a bound for failure, not a wait for
/// success); the last value it produced.
func eventually<Value: Sendable>(seconds: Double = 30, _ condition: () async throws -> Value?) async throws -> Value? {
    let deadline = Date().addingTimeInterval(seconds)
    while true {
        if let value = try await condition() { return value }
        if Date() > deadline { return nil }
        try await Task.sleep(for: .milliseconds(20))
    }
}
