import HTTPServer
import JSON
import WireFormat

/// `GET /auth/authorize` shows the consent sheet; the sheet posts back to
/// `POST /auth/authorize`, which answers the `redirect_uri` the way the request asked.
struct AuthorizeEndpoint: Sendable {
    let context: SimulatorContext

    func show(_ request: HTTPRequest) -> HTTPResponse {
        let form: FormFields
        do {
            form = try FormFields(parsing: request.query ?? "")
        } catch {
            return Self.rejected(AuthorizeRequest.Rejection(title: "Invalid request.", code: "invalid_request"))
        }
        do {
            let authorization = try AuthorizeRequest(form)
            return AppleResponse.html(
                ConsentPage.render(authorization), policy: ContentSecurityPolicy.page(redirectURI: authorization.redirectURI))
        } catch {
            return Self.rejected(error)
        }
    }

    func submit(_ request: HTTPRequest) -> HTTPResponse {
        guard FormFields.isFormContentType(request.headers["Content-Type"]), let form = try? FormFields(parsing: request.body) else {
            return Self.rejected(AuthorizeRequest.Rejection(title: "Invalid request.", code: "invalid_request"))
        }
        let authorization: AuthorizeRequest
        do {
            authorization = try AuthorizeRequest(form)
        } catch {
            return Self.rejected(error)
        }
        if form["action"] == "cancel" {
            return deliver(authorization, fields: [("error", "user_cancelled_authorize")] + stateField(authorization))
        }
        let values = ConsentPage.Values(
            appleID: String((form["email"] ?? "").trimmingWhitespaceAndNewlines()),
            firstName: String((form["first_name"] ?? "").trimmingWhitespaceAndNewlines()),
            lastName: String((form["last_name"] ?? "").trimmingWhitespaceAndNewlines()), hideEmail: form["email_choice"] == "hide")
        guard values.appleID.contains("@"), values.appleID.count <= 254 else {
            var retry = values
            retry.problem = "Enter the email address of your Apple ID."
            return AppleResponse.html(
                ConsentPage.render(authorization, values: retry), policy: ContentSecurityPolicy.page(redirectURI: authorization.redirectURI))
        }
        do {
            return try authorize(authorization, values: values)
        } catch {
            context.logger.error("simulator authorize failed: \(error)")
            return AppleResponse.html(ErrorPage.render(title: "Your request could not be completed.", detail: "server_error"), status: 500)
        }
    }

    private func authorize(_ authorization: AuthorizeRequest, values: ConsentPage.Values) throws -> HTTPResponse {
        let now = context.now
        let code = OpaqueToken.code.make()
        let (grant, isFirst, key, transferSub) = context.store.change { state -> (Grant, Bool, SigningKeyRing.SigningKey, String?) in
            let person = state.person(appleID: values.appleID, teamID: state.owner(of: authorization.clientID), now: now)
            let grantKey = Grant.key(sub: person.sub, clientID: authorization.clientID)
            let existing = state.grants[grantKey]
            // The choices made at the first authorization stand; later ones are not asked again.
            let grant = existing ?? Grant(
                sub: person.sub, clientID: authorization.clientID,
                email: authorization.wantsEmail ? (values.hideEmail ? person.relayEmail : values.appleID) : nil,
                isPrivateEmail: authorization.wantsEmail && values.hideEmail, createdAt: now)
            state.grants[grantKey] = grant
            state.prune(now: now)
            state.codes[code] = AuthorizationCode(
                code: code, sub: person.sub, clientID: authorization.clientID, redirectURI: authorization.redirectURI,
                nonce: authorization.nonce, email: grant.email, isPrivateEmail: grant.isPrivateEmail, authTime: now, issuedAt: now)
            return (
                grant, existing == nil, state.signingKeys.current,
                state.transferSub(forSub: person.sub, clientID: authorization.clientID, now: now)
            )
        }

        var fields = stateField(authorization)
        fields.append(("code", code))
        if authorization.includesIDToken {
            let subject = IdentityTokenMinter.Subject(
                sub: grant.sub, clientID: grant.clientID, email: grant.email, isPrivateEmail: grant.isPrivateEmail,
                nonce: authorization.nonce, authTime: now, transferSub: transferSub)
            fields.append(("id_token", try context.identityTokens.mint(for: subject, flavor: .authorize(code: code), now: now, key: key)))
        }
        // `user` only on the first authorization, only through form_post, only the scoped
        // parts, and as a JSON-encoded string (APPLE.md §1.2).
        if isFirst, authorization.responseMode == .formPost {
            var user = JSONObject()
            if authorization.wantsName {
                let name = JSONObject.compact([
                    ("firstName", values.firstName.isEmpty ? nil : .string(values.firstName)),
                    ("lastName", values.lastName.isEmpty ? nil : .string(values.lastName)),
                ])
                if !name.isEmpty { user["name"] = .object(name) }
            }
            if let email = grant.email, authorization.wantsEmail { user["email"] = .string(email) }
            if !user.isEmpty { fields.append(("user", JSONWriter.string(.object(user)))) }
        }
        return deliver(authorization, fields: fields)
    }

    private func stateField(_ authorization: AuthorizeRequest) -> [(name: String, value: String)] {
        authorization.state.map { [("state", $0)] } ?? []
    }

    private func deliver(_ authorization: AuthorizeRequest, fields: [(name: String, value: String)]) -> HTTPResponse {
        let encoded = FormFields(fields: fields).encoded()
        switch authorization.responseMode {
        case .formPost:
            return AppleResponse.html(
                FormPostPage.render(action: authorization.redirectURI, fields: fields), policy: ContentSecurityPolicy.formPost)
        case .query:
            let separator = authorization.redirectURI.contains("?") ? "&" : "?"
            return Self.redirect(authorization.redirectURI + separator + encoded)
        case .fragment:
            return Self.redirect(authorization.redirectURI + "#" + encoded)
        }
    }

    private static func redirect(_ location: String) -> HTTPResponse {
        var headers = AppleResponse.headers(contentType: "text/plain;charset=UTF-8")
        headers.set("Location", location)
        return HTTPResponse(status: 302, headers: headers, body: [])
    }

    static func rejected(_ rejection: AuthorizeRequest.Rejection) -> HTTPResponse {
        AppleResponse.html(ErrorPage.render(title: rejection.title, detail: rejection.code), status: 400)
    }
}
