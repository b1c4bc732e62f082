import HTTPServer

extension CrossOriginPolicy {
    /// docs/guides/connecting-your-app.md: the web apps of `cors_origins` call `/api/*` and `/auth/verify` with the
    /// session cookie or a bearer token; nil (CORS off, nothing checked per request) when none
    /// is listed.
    static func siwa(origins: [String]) -> CrossOriginPolicy? {
        guard !origins.isEmpty else { return nil }
        return CrossOriginPolicy(
            origins: origins, allowMethods: "GET, POST, PUT, PATCH, DELETE", allowHeaders: "Authorization, Content-Type, X-Request-Id",
            exposeHeaders: "X-Request-Id, Retry-After", maxAgeSeconds: 600,
            isInScope: { path in path.hasPrefix("/api/") || path == "/auth/verify" })
    }
}
