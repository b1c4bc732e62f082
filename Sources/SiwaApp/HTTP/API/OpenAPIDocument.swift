/// `GET /openapi.json`: the OpenAPI 3.1 description of the HTTP API (docs/reference/http-api.md),
/// written out as the contract it is in `OpenAPI/openapi.json` and embedded in the binary
/// (`EmbeddedFiles`). `OpenAPITests` keeps it valid JSON and in step with the route table (every route
/// described with its guard, every described route served).
enum OpenAPIDocument {
    static let bytes: [UInt8] = EmbeddedFiles.openAPIJSON
    static let json = String(decoding: bytes, as: UTF8.self)
}
