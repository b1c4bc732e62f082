import Foundation
import HTTPClient

/// The error a call ends with, or nil when it succeeded.
func failure(of call: () async throws(HTTPClientError) -> HTTPClientResponse) async -> HTTPClientError? {
    do {
        _ = try await call()
        return nil
    } catch {
        return error
    }
}

extension HTTPClientError {
    var isTLSFailure: Bool {
        if case .tlsFailed = self { return true }
        return false
    }

    var isMalformedResponse: Bool {
        if case .malformedResponse = self { return true }
        return false
    }
}

extension HTTPClientResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Seconds elapsed while running `body`.
func seconds(_ body: () async throws -> Void) async rethrows -> Double {
    let start = ContinuousClock.now
    try await body()
    let elapsed = ContinuousClock.now - start
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}
