import HTTPServer
import Store
import WireFormat

/// The query of `GET /admin/users` (docs/guides/connecting-your-backend.md): `email`, `apple_sub`, `external_id` (exact
/// matches), `limit` (1 to 200, default 50) and `cursor`, read into types. Pure, so it is
/// tested without a socket. Any other parameter is refused: a misspelt filter must not quietly
/// list everyone.
struct UserListQuery: Sendable, Equatable {
    /// Why a query is refused (400 `invalid_request`); the text is for people.
    struct Invalid: Error, Equatable {
        let description: String
    }

    static let defaultLimit = 50

    var filter = UserFilter()
    var limit = defaultLimit
    /// The id of the last user of the previous page.
    var afterID: String?

    init(filter: UserFilter = UserFilter(), limit: Int = defaultLimit, afterID: String? = nil) {
        self.filter = filter
        self.limit = limit
        self.afterID = afterID
    }

    init(parsing query: String?) throws(Invalid) {
        let fields: FormFields
        do {
            fields = try FormFields(parsing: query ?? "")
        } catch .duplicate(let name) {
            throw Invalid(description: "\(Self.quoted(name)) is given more than once")
        } catch {
            throw Invalid(description: "the query is not well-formed percent-encoded UTF-8 (without U+0000)")
        }
        for (name, value) in fields.fields {
            switch name {
            case "email": filter.email = try Self.nonEmpty(name, value)
            case "apple_sub": filter.appleSub = try Self.nonEmpty(name, value)
            case "external_id": filter.externalID = try Self.nonEmpty(name, value)
            case "limit":
                guard !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(value),
                      (1...UserStore.maximumPage).contains(number)
                else { throw Invalid(description: "limit must be a whole number from 1 to \(UserStore.maximumPage)") }
                limit = number
            case "cursor":
                guard let id = Self.id(inCursor: value) else {
                    throw Invalid(description: "cursor is not one this server gave (use next_cursor as it is)")
                }
                afterID = id
            default:
                throw Invalid(description: "unknown query parameter \(Self.quoted(name)); known: email, apple_sub, external_id, limit, cursor")
            }
        }
    }

    /// The opaque `next_cursor` of a page whose last user is `id`: base64url of the id, so
    /// clients pass it back unchanged and never build one.
    static func cursor(after id: String) -> String {
        Base64.url.encode(id)
    }

    /// The user id a cursor holds, or nil for text no cursor of ours can be: record ids are
    /// ASCII letters, digits and `_`.
    static func id(inCursor cursor: String) -> String? {
        guard !cursor.isEmpty, cursor.utf8.count <= 128, let bytes = Base64.url.decode(cursor), !bytes.isEmpty,
              bytes.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F })
        else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func nonEmpty(_ name: String, _ value: String) throws(Invalid) -> String {
        guard !value.isEmpty else { throw Invalid(description: "\(name) must not be empty (leave it out to list every user)") }
        return value
    }

    /// A client's parameter name in an error, bounded and without control characters.
    private static func quoted(_ name: String) -> String {
        "\"" + String(String.UnicodeScalarView(name.unicodeScalars.prefix(40).filter { $0.properties.generalCategory != .control })) + "\""
    }
}
