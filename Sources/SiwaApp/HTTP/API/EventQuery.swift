import Accounts
import HTTPServer
import Store
import WireFormat

/// The query of `GET /admin/events` and `GET /api/account/activity` (docs/reference/http-api.md
/// "Activity"): filters, `limit` and `cursor`, read into types. Pure, so it is tested without a
/// socket. A parameter the route does not take is refused: a misspelt filter must not quietly
/// list everything.
struct EventQuery: Sendable, Equatable {
    /// Why a query is refused (400 `invalid_request`); the text is for people.
    struct Invalid: Error, Equatable {
        let description: String
    }

    /// What a route accepts.
    struct Shape: Sendable {
        let parameters: [String]
        let defaultLimit: Int
        let maximumLimit: Int

        /// `/api/account/activity`: the person's own events.
        static let activity = Shape(parameters: ["limit", "cursor"], defaultLimit: 20, maximumLimit: 100)
        /// `/admin/events`.
        static let admin = Shape(parameters: ["user_id", "type", "since", "until", "limit", "cursor"], defaultLimit: 50, maximumLimit: 200)
    }

    var filter = AuditFilter()
    var limit: Int
    var cursor: AuditCursor?

    init(parsing query: String?, shape: Shape) throws(Invalid) {
        limit = shape.defaultLimit
        let fields: FormFields
        do {
            fields = try FormFields(parsing: query ?? "")
        } catch .duplicate(let name) {
            throw Invalid(description: "\(Self.quoted(name)) is given more than once")
        } catch {
            throw Invalid(description: "the query is not well-formed percent-encoded UTF-8 (without U+0000)")
        }
        for (name, value) in fields.fields {
            guard shape.parameters.contains(name) else {
                throw Invalid(description: "unknown query parameter \(Self.quoted(name)); known: \(shape.parameters.joined(separator: ", "))")
            }
            switch name {
            case "user_id":
                guard !value.isEmpty, value.utf8.count <= 128 else { throw Invalid(description: "user_id must be a user's id") }
                filter.userID = value
            case "type":
                guard !value.isEmpty, value.utf8.count <= 64 else { throw Invalid(description: "type must be an event type or its prefix (sign_in.)") }
                filter.typePrefix = value
            case "since", "until":
                guard let time = RFC3339.parse(value) else {
                    throw Invalid(description: "\(name) must be an RFC 3339 time (2026-11-22T10:00:00Z)")
                }
                if name == "since" { filter.since = time } else { filter.until = time }
            case "limit":
                guard !value.isEmpty, value.utf8.count <= 4, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(value),
                      (1...shape.maximumLimit).contains(number)
                else { throw Invalid(description: "limit must be a whole number from 1 to \(shape.maximumLimit)") }
                limit = number
            default:
                guard let cursor = AuditCursor(encoded: value) else {
                    throw Invalid(description: "cursor is not one this server gave (use next_cursor as it is)")
                }
                self.cursor = cursor
            }
        }
    }

    private static func quoted(_ name: String) -> String {
        "\"" + String(name.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) }) + "\""
    }
}
