import Foundation

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
