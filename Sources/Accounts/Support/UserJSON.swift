import JSON
import Store

/// The `USER` object of docs/reference/http-api.md, in the order it is documented.
package enum UserJSON {
    package static func value(_ user: UserRecord) -> JSONValue {
        .object(object(user))
    }

    /// The object's bytes, exactly as `JSONWriter.bytes(value(user))` writes them, without
    /// building the tree: `/api/me` answers with it on every call, and the tree's members,
    /// enum boxes and dated strings cost more than writing.
    package static func bytes(_ user: UserRecord) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(512)
        write(user, into: &output)
        return output
    }

    package static func write(_ user: UserRecord, into output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.writeString(user.id, into: &output)
        output.append(contentsOf: #","apple_sub":"#.utf8)
        writeOptional(user.appleSub, into: &output)
        output.append(contentsOf: #","email":"#.utf8)
        writeOptional(user.email, into: &output)
        output.append(contentsOf: #","email_verified":"#.utf8)
        output.append(contentsOf: (user.emailVerified ? "true" : "false").utf8)
        output.append(contentsOf: #","is_private_email":"#.utf8)
        output.append(contentsOf: (user.isPrivateEmail ? "true" : "false").utf8)
        output.append(contentsOf: #","email_forwarding":"#.utf8)
        writeOptional(user.emailForwarding?.rawValue, into: &output)
        output.append(contentsOf: #","real_user_status":"#.utf8)
        JSONWriter.writeString(user.realUserStatus.rawValue, into: &output)
        output.append(contentsOf: #","name":"#.utf8)
        if user.givenName == nil && user.familyName == nil {
            output.append(contentsOf: "null".utf8)
        } else {
            output.append(contentsOf: #"{"given":"#.utf8)
            writeOptional(user.givenName, into: &output)
            output.append(contentsOf: #","family":"#.utf8)
            writeOptional(user.familyName, into: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: #","apple_credential":"#.utf8)
        writeOptional(user.appleSub == nil ? nil : user.appleCredential.rawValue, into: &output)
        output.append(contentsOf: #","external_id":"#.utf8)
        writeOptional(user.externalID, into: &output)
        output.append(contentsOf: #","sign_in_methods":["#.utf8)
        if user.appleSub != nil { output.append(contentsOf: #""apple""#.utf8) }
        if user.hasPassword { output.append(contentsOf: (user.appleSub != nil ? #","password""# : #""password""#).utf8) }
        output.append(contentsOf: #"],"locale":"#.utf8)
        JSONWriter.writeString(user.locale, into: &output)
        output.append(contentsOf: #","created_at":""#.utf8)
        writeTime(user.createdAt, into: &output)
        output.append(contentsOf: #"","updated_at":""#.utf8)
        writeTime(user.updatedAt, into: &output)
        output.append(contentsOf: #""}"#.utf8)
    }

    private static func writeOptional(_ text: String?, into output: inout [UInt8]) {
        if let text { JSONWriter.writeString(text, into: &output) } else { output.append(contentsOf: "null".utf8) }
    }

    /// `RFC3339.format` without its String: the 20 bytes, which need no escaping.
    private static func writeTime(_ seconds: Int64, into output: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { bytes in
            RFC3339.writeDateTime(seconds: Int(seconds), into: bytes)
            bytes[19] = UInt8(ascii: "Z")
            output.append(contentsOf: bytes)
        }
    }

    package static func object(_ user: UserRecord) -> JSONObject {
        let name: JSONValue
        if user.givenName == nil && user.familyName == nil {
            name = .null
        } else {
            name = .object(JSONObject([
                ("given", user.givenName.map(JSONValue.string) ?? .null), ("family", user.familyName.map(JSONValue.string) ?? .null),
            ]))
        }
        return JSONObject([
            ("id", .string(user.id)),
            ("apple_sub", user.appleSub.map(JSONValue.string) ?? .null),
            ("email", user.email.map(JSONValue.string) ?? .null),
            ("email_verified", .bool(user.emailVerified)),
            ("is_private_email", .bool(user.isPrivateEmail)),
            ("email_forwarding", user.emailForwarding.map { .string($0.rawValue) } ?? .null),
            ("real_user_status", .string(user.realUserStatus.rawValue)),
            ("name", name),
            // The state of an Apple ID the user has; none without one.
            ("apple_credential", user.appleSub == nil ? .null : .string(user.appleCredential.rawValue)),
            ("external_id", user.externalID.map(JSONValue.string) ?? .null),
            ("sign_in_methods", .array(user.signInMethods.map(JSONValue.string))),
            ("locale", .string(user.locale)),
            ("created_at", .string(RFC3339.format(user.createdAt))),
            ("updated_at", .string(RFC3339.format(user.updatedAt))),
        ])
    }
}
