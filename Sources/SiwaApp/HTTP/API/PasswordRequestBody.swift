import Accounts
import JSON

/// The JSON bodies of docs/guides/passwords-and-email.md's routes, read into fields: each refusal names the key that is
/// missing or of the wrong type (400 `invalid_request`), never its value.
struct PasswordRequestBody: Sendable {
    private let object: JSONObject

    init(parsing body: [UInt8]) throws(PasswordFailure) {
        do {
            object = try JSONParser.object(body)
        } catch {
            throw Self.invalid(error.description)
        }
    }

    /// A non-empty string.
    func required(_ key: String) throws(PasswordFailure) -> String {
        guard let text = try optional(key) else { throw Self.invalid("\(key) is required and must be a non-empty string") }
        return text
    }

    /// A string, or nil when absent, null or empty.
    func optional(_ key: String) throws(PasswordFailure) -> String? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let text = value.string else { throw Self.invalid("\(key) must be a string") }
        return text.isEmpty ? nil : text
    }

    /// `device_name`, cut to what is stored (docs/reference/http-api.md).
    func deviceName() throws(PasswordFailure) -> String? {
        try optional("device_name").map { StoredText.cut($0) }
    }

    /// `name: {given, family}` of a sign-up, each cut to what is stored.
    func name() throws(PasswordFailure) -> (given: String?, family: String?) {
        guard let value = object["name"], !value.isNull else { return (nil, nil) }
        guard let name = value.object else { throw Self.invalid("name must be an object with given and family") }
        func part(_ key: String) throws(PasswordFailure) -> String? {
            guard let value = name[key], !value.isNull else { return nil }
            guard let text = value.string else { throw Self.invalid("name.\(key) must be a string") }
            return text.isEmpty ? nil : StoredText.cut(text)
        }
        return (try part("given"), try part("family"))
    }

    private static func invalid(_ description: String) -> PasswordFailure {
        .invalidRequest(description)
    }
}
