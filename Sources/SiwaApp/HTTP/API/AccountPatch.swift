import JSON
import MailTemplates

/// The body of `PATCH /api/account` (docs/guides/passwords-and-email.md): `{"locale": "en"|"ko"}`, the only field a user
/// changes this way. Unknown fields are refused, so a misspelt one is not a silent no-op.
struct AccountPatch: Sendable, Equatable {
    struct Invalid: Error, Equatable, CustomStringConvertible {
        let description: String
    }

    let locale: Language

    init(parsing body: [UInt8]) throws(Invalid) {
        let object: JSONObject
        do {
            object = try JSONParser.object(body)
        } catch {
            throw Invalid(description: error.description)
        }
        if let unknown = object.keys.first(where: { $0 != "locale" }) {
            throw Invalid(description: "unknown field \"\(unknown.prefix(40))\"; only locale can be changed")
        }
        let choices = Language.allCases.map(\.rawValue).joined(separator: " or ")
        guard let value = object["locale"] else { throw Invalid(description: "locale is required (\(choices))") }
        guard let text = value.string, let language = Language(rawValue: text) else { throw Invalid(description: "locale must be \(choices)") }
        locale = language
    }
}
