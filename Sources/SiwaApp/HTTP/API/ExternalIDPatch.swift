import JSON

/// The body of `PATCH /admin/users/{id}` (docs/guides/connecting-your-backend.md): `{"external_id": string|null}`, the only
/// field an operator may change. Unknown fields are refused, so a misspelt one is not a silent
/// no-op. Pure, so it is tested without a socket.
struct ExternalIDPatch: Sendable, Equatable {
    /// Why a body or value is refused (400 `invalid_request`); the text is for people.
    struct Invalid: Error, Equatable {
        let description: String
    }

    /// The longest `external_id` kept, in bytes of UTF-8 (as other stored strings, docs/reference/http-api.md).
    static let maxBytes = 256

    /// nil clears the user's external id.
    var externalID: String?

    init(externalID: String?) {
        self.externalID = externalID
    }

    init(parsing body: [UInt8]) throws(Invalid) {
        let object: JSONObject
        do {
            object = try JSONParser.object(body)
        } catch {
            throw Invalid(description: error.description)
        }
        if let unknown = object.keys.first(where: { $0 != "external_id" }) {
            throw Invalid(description: "unknown field \"\(unknown.prefix(40))\"; only external_id can be changed")
        }
        guard let value = object["external_id"] else { throw Invalid(description: "external_id is required (a string, or null to clear it)") }
        if value.isNull {
            externalID = nil
        } else if let text = value.string {
            externalID = try Self.validated(text)
        } else {
            throw Invalid(description: "external_id must be a string or null")
        }
    }

    /// An external id as it may be stored: not empty, at most 256 bytes of UTF-8, no control
    /// characters (it travels in `X-Siwa-External-Id` headers and log lines). Refused rather
    /// than cut: it is the key of the team's own records, and a shortened one would name
    /// another.
    static func validated(_ value: String) throws(Invalid) -> String {
        guard !value.isEmpty else { throw Invalid(description: "external_id must not be empty (use null to clear it)") }
        guard value.utf8.count <= maxBytes else {
            throw Invalid(description: "external_id must be at most \(maxBytes) bytes of UTF-8, not \(value.utf8.count)")
        }
        guard !value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw Invalid(description: "external_id must not contain control characters")
        }
        return value
    }
}
