import HTTPServer
import JSON
import Synchronization

/// Queued faults per endpoint; each call takes one use of the first fault queued for it.
final class FaultInjector: Sendable {
    private let queues = Mutex<[SimulatorFault.Endpoint: [SimulatorFault]]>([:])

    func add(_ fault: SimulatorFault) {
        queues.withLock { $0[fault.endpoint, default: []].append(fault) }
    }

    func clear() {
        queues.withLock { $0.removeAll() }
    }

    var pending: [SimulatorFault] {
        queues.withLock { queues in SimulatorFault.Endpoint.allCases.flatMap { queues[$0] ?? [] } }
    }

    /// The fault for this call, if one is queued, counting the use.
    func take(_ endpoint: SimulatorFault.Endpoint) -> SimulatorFault? {
        queues.withLock { queues in
            guard var queue = queues[endpoint], !queue.isEmpty else { return nil }
            if queue[0].after > 0 {
                queue[0].after -= 1
                queues[endpoint] = queue
                return nil
            }
            let fault = queue[0]
            queue[0].count -= 1
            if queue[0].count <= 0 { queue.removeFirst() }
            queues[endpoint] = queue.isEmpty ? nil : queue
            return fault
        }
    }

    /// Runs `handler` under the fault queued for `endpoint`, if any.
    func perform(
        _ endpoint: SimulatorFault.Endpoint, _ request: HTTPRequest, handler: @Sendable (HTTPRequest) async -> HTTPResponse
    ) async -> HTTPResponse {
        guard let fault = take(endpoint) else { return await handler(request) }
        if fault.delayMilliseconds > 0 { try? await Task.sleep(for: .milliseconds(fault.delayMilliseconds)) }
        if let hold = fault.hold { await hold.wait() }
        switch fault.body {
        case .garbage?:
            return HTTPResponse(
                status: fault.status ?? 200, headers: ["Content-Type": "text/html"],
                body: Array("<html><body><h1>Bad Gateway</h1>\u{1}\u{7F}not json".utf8))
        case .truncated?:
            var response = await handler(request)
            if let status = fault.status { response.status = status }
            let body = response.body.isEmpty ? Array(#"{"error":"server_err"#.utf8) : response.body
            response.body = Array(body.prefix(max(1, body.count / 2)))
            return response
        case nil:
            guard let status = fault.status else { return await handler(request) }
            return Self.errorResponse(endpoint, status: status, code: fault.error)
        }
    }

    /// What Apple answers when it fails: its error JSON, or its error page on authorize.
    static func errorResponse(_ endpoint: SimulatorFault.Endpoint, status: Int, code: String?) -> HTTPResponse {
        let defaultCode = switch status {
        case 401: "invalid_client"
        case 429: "too_many_requests"
        case 400..<500: "invalid_request"
        default: "server_error"
        }
        let code = code ?? defaultCode
        if endpoint == .authorize {
            return AppleResponse.html(ErrorPage.render(title: "Your request could not be completed.", detail: code), status: status)
        }
        return AppleResponse.error(code, "Injected fault (\(status)).", status: status)
    }
}
