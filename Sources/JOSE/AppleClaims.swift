import JSON

/// The claims of an Apple identity token or notification, read the way Apple actually sends
/// them (APPLE.md §6, §7): booleans as booleans, as `"true"`/`"false"` strings, or absent.
public struct AppleClaims: Sendable {
    public enum RealUserStatus: String, Sendable {
        case unsupported, unknown
        case likelyReal = "likely_real"
    }

    public let issuer: String?
    public let audiences: [String]
    public let subject: String
    public let issuedAt: Int64
    public let expiresAt: Int64?
    public let nonce: String?
    public let nonceSupported: Bool
    public let codeHash: String?
    public let email: String?
    public let emailVerified: Bool
    public let isPrivateEmail: Bool
    public let realUserStatus: RealUserStatus
    public let authTime: Int64?
    public let transferSubject: String?
    public let tokenID: String?
    /// Present only in notifications.
    public let events: [AppleEvent]?

    /// The latest time a claim may name: 9999-12-31T23:59:59Z. Times past it (and before 1970)
    /// are `malformed`, so adding the leeway, or turning seconds into milliseconds, cannot
    /// overflow anywhere downstream (a signed `exp` of 2^63 - 1 once crashed the process).
    public static let latestTime: Int64 = 253_402_300_799

    /// Reads the claims in one pass over the members (this runs for every token verified); a
    /// claim of the wrong type where one is required is `malformed`.
    init(_ payload: JSONObject, requireSubject: Bool) throws(TokenFailure) {
        var issuer: String?, audiences: [String] = [], subject: String?, issued: JSONValue?, expires: JSONValue?
        var nonce: String?, nonceSupported = false, codeHash: String?, email: String?, emailVerified = false
        var isPrivateEmail = false, realUserStatus = RealUserStatus.unsupported, authTime: Int64?
        var transferSubject: String?, tokenID: String?, events: JSONValue?
        for (key, value) in payload {
            switch Claim(key) {
            case .iss?: issuer = value.string
            case .aud?:
                switch value {
                case .string(let audience): audiences = [audience]
                // A non-string entry is an audience that is not ours, never one to skip.
                case .array(let list): audiences = list.map { $0.string ?? "" }
                default: break
                }
            case .sub?: subject = value.string
            case .iat?: issued = value
            case .exp?: expires = value
            case .nonce?: nonce = value.string
            case .nonceSupported?: nonceSupported = Self.flag(value)
            case .cHash?: codeHash = value.string
            case .email?: email = value.string
            case .emailVerified?: emailVerified = Self.flag(value)
            case .isPrivateEmail?: isPrivateEmail = Self.flag(value)
            case .realUserStatus?:
                switch value.integer {
                case 1?: realUserStatus = .unknown
                case 2?: realUserStatus = .likelyReal
                default: realUserStatus = .unsupported
                }
            case .authTime?: authTime = try Self.time(value)
            // Apple sends no `nbf`; one that is there must at least be a time.
            case .nbf?: _ = try Self.time(value)
            case .transferSub?: transferSubject = value.string
            case .jti?: tokenID = value.string
            case .events?: events = value
            case nil: break
            }
        }
        // Everything that can throw runs before the first property is set: a throw after it
        // makes the compiler build the value aside and copy it, field by field, on every token.
        if requireSubject, subject == nil || subject!.isEmpty { throw .malformed }
        guard let issued, let issuedAt = try Self.time(issued) else { throw .malformed }
        let expiresAt = try expires.flatMap { value throws(TokenFailure) in try Self.time(value) }
        let eventList = try events.map { value throws(TokenFailure) in try AppleEvent.list(from: value) }
        self.expiresAt = expiresAt
        self.issuer = issuer
        self.audiences = audiences
        self.subject = subject ?? ""
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.nonceSupported = nonceSupported
        self.codeHash = codeHash
        self.email = email
        self.emailVerified = emailVerified
        self.isPrivateEmail = isPrivateEmail
        self.realUserStatus = realUserStatus
        self.authTime = authTime
        self.transferSubject = transferSubject
        self.tokenID = tokenID
        self.events = eventList
    }

    /// The members read above. A `switch` over string literals compares a key with every case
    /// in turn (a dozen members against seventeen names for every token), so the length picks
    /// the few names to compare. Exact: each name is ASCII that no other Unicode text equals,
    /// so a key equal to one has its bytes, and its length.
    private enum Claim {
        case iss, aud, sub, iat, exp, nbf, jti, nonce, email, cHash, events, authTime, transferSub
        case emailVerified, nonceSupported, isPrivateEmail, realUserStatus

        init?(_ key: String) {
            let claim: Claim? = switch key.utf8.count {
            case 3:
                switch key {
                case "iss": .iss
                case "aud": .aud
                case "sub": .sub
                case "iat": .iat
                case "exp": .exp
                case "nbf": .nbf
                case "jti": .jti
                default: nil
                }
            case 5: key == "nonce" ? .nonce : key == "email" ? .email : nil
            case 6: key == "c_hash" ? .cHash : key == "events" ? .events : nil
            case 9: key == "auth_time" ? .authTime : nil
            case 12: key == "transfer_sub" ? .transferSub : nil
            case 14: key == "email_verified" ? .emailVerified : nil
            case 15: key == "nonce_supported" ? .nonceSupported : nil
            case 16: key == "is_private_email" ? .isPrivateEmail : key == "real_user_status" ? .realUserStatus : nil
            default: nil
            }
            guard let claim else { return nil }
            self = claim
        }
    }

    /// A time claim in whole seconds since 1970 within `0...latestTime`; nil for `null`.
    static func time(_ value: JSONValue) throws(TokenFailure) -> Int64? {
        if value.isNull { return nil }
        guard let seconds = value.integer, (0...latestTime).contains(seconds) else { throw .malformed }
        return seconds
    }

    /// `true`, `"true"` (any case) → true; `false`, `"false"`, absent or anything else → false.
    static func flag(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let flag)?: flag
        case .string(let text)?: text == "true" || (text.utf8.count == 4 && text.lowercased() == "true")
        default: false
        }
    }
}

/// One server-to-server notification event.
public struct AppleEvent: Sendable, Equatable {
    public let type: String
    public let subject: String
    /// Milliseconds since 1970 on the wire (APPLE.md §7), whatever the docs' example shows.
    public let eventTimeMilliseconds: Int64?
    public let email: String?
    public let isPrivateEmail: Bool?

    public init(type: String, subject: String, eventTimeMilliseconds: Int64?, email: String? = nil, isPrivateEmail: Bool? = nil) {
        self.type = type
        self.subject = subject
        self.eventTimeMilliseconds = eventTimeMilliseconds
        self.email = email
        self.isPrivateEmail = isPrivateEmail
    }

    /// `events` as Apple sends it (a JSON-encoded string), or as an object, or an array.
    static func list(from value: JSONValue) throws(TokenFailure) -> [AppleEvent] {
        var value = value
        if case .string(let encoded) = value {
            guard let decoded = try? JSONParser.parse(encoded) else { throw .malformed }
            value = decoded
        }
        switch value {
        case .object(let object): return [try AppleEvent(object)]
        case .array(let list) where !list.isEmpty:
            var events: [AppleEvent] = []
            for element in list {
                guard let object = element.object else { throw .malformed }
                events.append(try AppleEvent(object))
            }
            return events
        default: throw .malformed
        }
    }

    init(_ object: JSONObject) throws(TokenFailure) {
        // An event without a type or subject names nothing to change; an empty `sub` must not
        // reach the store, where it could only match a row that should not exist.
        guard let type = object["type"]?.string, !type.isEmpty,
              let subject = object["sub"]?.string, !subject.isEmpty else { throw .malformed }
        self.type = type
        self.subject = subject
        // Milliseconds, so the bound is a thousand times the latest time in seconds.
        if let time = object["event_time"], !time.isNull {
            guard let milliseconds = time.integer, (0...AppleClaims.latestTime * 1000).contains(milliseconds) else { throw .malformed }
            eventTimeMilliseconds = milliseconds
        } else {
            eventTimeMilliseconds = nil
        }
        email = object["email"]?.string
        isPrivateEmail = object["is_private_email"].map { AppleClaims.flag($0) }
    }
}
