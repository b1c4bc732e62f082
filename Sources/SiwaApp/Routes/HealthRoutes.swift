import HTTPServer

/// `/healthz`, `/readyz`, `/metrics` and `/openapi.json` (docs/guides/operating.md).
enum HealthRoutes {
    static func register(on router: inout Router, readiness: Readiness, metrics: Metrics) {
        // Answers while the process serves; it touches nothing that can block.
        router.add(.get, "/healthz") { _ in .json(200, #"{"status":"ok"}"#) }

        router.add(.get, "/readyz") { _ in
            let reasons = await readiness.reasons()
            if reasons.isEmpty { return .json(200, #"{"status":"ready"}"#) }
            let list = reasons.map { "\"\($0)\"" }.joined(separator: ",")
            return .json(503, #"{"status":"not_ready","reasons":["# + list + "]}")
        }

        router.add(.get, "/metrics") { _ in
            HTTPResponse(contentType: PrometheusText.contentType, body: await metrics.render())
        }

        let openAPI = Array(OpenAPIDocument.json.utf8)
        router.add(.get, "/openapi.json") { _ in HTTPResponse(headers: ["Content-Type": "application/json"], body: openAPI) }
    }
}
