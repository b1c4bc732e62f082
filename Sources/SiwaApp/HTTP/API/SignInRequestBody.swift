import Accounts
import JSON

/// The JSON body of `POST /api/auth/apple`, read into types: the only place its keys are
/// named. Pure (JSON only), so the fuzzer compiles it alone; every string kept is bounded.
struct SignInRequestBody: Sendable, Equatable {
    /// Why a body is refused (400 `invalid_request`); the text is for people.
    struct Invalid: Error, Equatable {
        let description: String
    }

    var identityToken: String
    var authorizationCode: String?
    var nonce: String?
    var deviceName: String?
    var user: AppleUserObject?

    init(identityToken: String) {
        self.identityToken = identityToken
    }

    init(parsing body: [UInt8]) throws(Invalid) {
        let object: JSONObject
        do {
            object = try JSONParser.object(body)
        } catch {
            throw Invalid(description: error.description)
        }
        guard let token = object["identity_token"]?.string, !token.isEmpty else {
            throw Invalid(description: "identity_token is required and must be a non-empty string")
        }
        func optionalString(_ key: String) throws(Invalid) -> String? {
            guard let value = object[key], !value.isNull else { return nil }
            guard let text = value.string else { throw Invalid(description: "\(key) must be a string") }
            return text.isEmpty ? nil : text
        }
        identityToken = token
        authorizationCode = try optionalString("authorization_code")
        nonce = try optionalString("nonce")
        deviceName = try optionalString("device_name").map { StoredText.cut($0) }
        if let user = object["user"], !user.isNull {
            guard let user = user.object else { throw Invalid(description: "user must be an object") }
            self.user = AppleUserObject(user)
        }
    }
}
