import HTTPServer
import Synchronization
import WireFormat

/// Every call received on Apple's endpoints, newest last, so tests can check what a client
/// sent (that a code went out once, that the client secret has Apple's shape).
final class CallLog: Sendable {
    static let capacity = 10_000

    private let calls = Mutex<[SimulatorCall]>([])

    func record(_ endpoint: SimulatorFault.Endpoint, _ request: HTTPRequest, time: Int64) {
        var parameters: [(name: String, value: String)] = []
        if let query = request.query { parameters += Self.pairs(query) }
        var rawBody: String?
        if !request.body.isEmpty {
            let text = String(decoding: request.body.prefix(64 * 1024), as: UTF8.self)
            if FormFields.isFormContentType(request.headers["Content-Type"]) {
                parameters += Self.pairs(text)
            } else {
                rawBody = text
            }
        }
        let call = SimulatorCall(
            time: time, endpoint: endpoint.rawValue, method: request.method.rawValue, parameterList: parameters,
            contentType: request.headers["Content-Type"], rawBody: rawBody, authorization: request.headers["Authorization"])
        calls.withLock {
            $0.append(call)
            if $0.count > Self.capacity { $0.removeFirst($0.count - Self.capacity) }
        }
    }

    var all: [SimulatorCall] { calls.withLock { $0 } }

    func clear() { calls.withLock { $0.removeAll() } }

    /// Lenient on purpose: the log shows what arrived, even what Apple would refuse.
    private static func pairs(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = PercentDecoding.decode(parts[0], plusAsSpace: true) ?? String(parts[0])
            let raw = parts.count > 1 ? parts[1] : ""
            return (name, PercentDecoding.decode(raw, plusAsSpace: true) ?? String(raw))
        }
    }
}
