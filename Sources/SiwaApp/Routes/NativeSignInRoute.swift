import HTTPServer
import JSON
import Store

/// `POST /api/auth/apple` (SPEC §4 "Native sign-in"): the JSON body of a native app, or the
/// result of Sign in with Apple JS popup mode that the web page forwards. A page of this site
/// (its `Origin` is `public_url`'s) also gets the session as the `siwa_session` cookie.
struct NativeSignInRoute: Sendable {
    let signIn: SignIn
    let cookies: SessionCookies

    func handle(_ request: HTTPRequest) async -> HTTPResponse {
        do throws(SignIn.Failure) {
            let result = try await signIn.run(try Self.parse(request.body), requestID: request.requestID)
            let body = JSONValue.object(JSONObject([
                ("session", .object(JSONObject([
                    ("token", .string(result.session.token)), ("expires_at", .string(RFC3339.format(result.session.record.expiresAt))),
                ]))),
                ("user", UserJSON.value(result.user)),
                ("created", .bool(result.created)),
            ]))
            var response = HTTPResponse(headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(body))
            if cookies.isSameOrigin(request) { response.headers.add("Set-Cookie", cookies.session(result.session)) }
            return response
        } catch {
            return error.response
        }
    }

    static func parse(_ body: [UInt8]) throws(SignIn.Failure) -> SignIn.Input {
        guard let object = try? JSONParser.parse(body).object else { throw .invalidRequest("the body must be a JSON object") }
        guard let token = object["identity_token"]?.string, !token.isEmpty else {
            throw .invalidRequest("identity_token is required and must be a non-empty string")
        }
        func optionalString(_ key: String) throws(SignIn.Failure) -> String? {
            guard let value = object[key], !value.isNull else { return nil }
            guard let text = value.string else { throw .invalidRequest("\(key) must be a string") }
            return text.isEmpty ? nil : text
        }
        var input = SignIn.Input(identityToken: token)
        input.authorizationCode = try optionalString("authorization_code")
        input.nonce = try optionalString("nonce")
        input.deviceName = try optionalString("device_name").map { StoredText.cut($0) }
        if let user = object["user"], !user.isNull {
            guard let user = user.object else { throw .invalidRequest("user must be an object") }
            input.profile = AppleUserObject.profile(from: user)
        }
        return input
    }
}
