import JOSE
import JSON
import OpenSSLCrypto
import WireFormat

/// A server-to-server notification as Apple signs it (APPLE.md §7): `events` is a
/// JSON-encoded string holding one object by default (the docs show an object, WWDC showed an
/// array — both available for tests), `event_time` is in milliseconds, and the email fields
/// are the strings `"true"`/`"false"`.
public struct NotificationEvent: Sendable {
    public enum EventsForm: String, Sendable {
        case string, object, array
    }

    public var type: String
    public var sub: String
    public var email: String?
    public var isPrivateEmail: Bool?
    public var eventsForm: EventsForm
    /// The `aud`; when nil, the person's first client, or `com.example.app`.
    public var clientID: String?

    public init(
        type: String, sub: String, email: String? = nil, isPrivateEmail: Bool? = nil, eventsForm: EventsForm = .string,
        clientID: String? = nil
    ) {
        self.type = type
        self.sub = sub
        self.email = email
        self.isPrivateEmail = isPrivateEmail
        self.eventsForm = eventsForm
        self.clientID = clientID
    }

    static let fallbackAudience = "com.example.app"

    var isEmailEvent: Bool { type.hasPrefix("email-") }

    /// The claims; `email` has been resolved by the caller for email events.
    func claims(audience: String, now: Int64, eventTimeMilliseconds: Int64, jti: String) -> JSONObject {
        var event = JSONObject([("type", .string(type)), ("sub", .string(sub)), ("event_time", .integer(eventTimeMilliseconds))])
        if isEmailEvent, let email {
            event["email"] = .string(email)
            let isPrivate = isPrivateEmail ?? Person.isRelayAddress(email)
            event["is_private_email"] = .string(isPrivate ? "true" : "false")
        }
        let events: JSONValue = switch eventsForm {
        case .string: .string(JSONWriter.string(.object(event)))
        case .object: .object(event)
        case .array: .array([.object(event)])
        }
        return JSONObject([
            ("iss", .string(IdentityTokenMinter.issuer)), ("aud", .string(audience)), ("iat", .integer(now)),
            ("exp", .integer(now + 86_400)), ("jti", .string(jti)), ("events", events),
        ])
    }

    static func makeJTI() -> String { Base64.url.encode(SecureRandom.bytes(16)) }
}
