import Accounts
import HTTPServer

/// `/healthz`, `/readyz`, `/metrics` and `/openapi.json` (docs/guides/operating.md).
struct HealthAPI: Sendable {
    let readiness: Readiness
    let metricsRegistry: Metrics

    /// Answers while the process serves; it touches nothing that can block.
    static func live(_: HTTPRequest) -> HTTPResponse {
        .json(200, #"{"status":"ok"}"#)
    }

    func ready(_: HTTPRequest) async -> HTTPResponse {
        let reasons = await readiness.reasons()
        if reasons.isEmpty { return .json(200, #"{"status":"ready"}"#) }
        let list = reasons.map { "\"\($0)\"" }.joined(separator: ",")
        return .json(503, #"{"status":"not_ready","reasons":["# + list + "]}")
    }

    func metrics(_: HTTPRequest) async -> HTTPResponse {
        HTTPResponse(contentType: PrometheusText.contentType, body: await metricsRegistry.render())
    }

    static func openAPI(_: HTTPRequest) -> HTTPResponse {
        HTTPResponse(headers: ["Content-Type": "application/json"], body: OpenAPIDocument.bytes)
    }
}
