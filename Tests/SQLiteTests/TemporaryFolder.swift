import Foundation
import Testing

/// Runs `body` with a fresh folder of its own under the system temp dir, removed afterwards,
/// so tests can run in parallel without sharing a database file.
func withTemporaryFolder<T>(_ body: (String) async throws -> T) async throws -> T {
    var template = Array((NSTemporaryDirectory() + "/sqlite-tests-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    guard let made else { throw POSIXError(.EIO) }
    let folder = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    return try await body(folder)
}

/// Polls `condition` until it holds, failing the test after `timeout`.
func eventually(
    timeout: Duration = .seconds(10),
    sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition still false after \(timeout)", sourceLocation: sourceLocation)
            throw CancellationError()
        }
        try await Task.sleep(for: .milliseconds(1))
    }
}
