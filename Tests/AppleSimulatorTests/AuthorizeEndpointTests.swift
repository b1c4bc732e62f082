import AppleSimulator
import HTTPClient
import JOSE
import JSON
import Testing
import WireFormat

@Suite struct AuthorizeEndpointTests {
    static let redirect = "https://app.example.com/auth/apple/callback"

    static func query(
        clientID: String = "com.example.web", responseType: String = "code id_token", responseMode: String? = "form_post",
        scope: String? = "name email", state: String = "st-123", nonce: String = "nonce-abc", redirectURI: String = redirect
    ) -> String {
        var fields = [("client_id", clientID), ("redirect_uri", redirectURI), ("response_type", responseType)]
        if let responseMode { fields.append(("response_mode", responseMode)) }
        if let scope { fields.append(("scope", scope)) }
        fields += [("state", state), ("nonce", nonce)]
        return "/auth/authorize?" + String(decoding: FormURLEncoding.encode(fields), as: UTF8.self)
    }

    @Test(arguments: [
        ("code", "query", "name email"), ("code id_token", "query", nil), ("code id_token", "fragment", "email"),
        ("code", "bogus", nil),
    ] as [(String, String, String?)])
    func aResponseModeApplesRulesForbidIsAnErrorPage(_ type: String, _ mode: String, _ scope: String?) async throws {
        try await withSimulator { harness in
            let response = try await harness.get(Self.query(responseType: type, responseMode: mode, scope: scope))
            #expect(response.status == 400)
            #expect(response.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(response.text.contains("Invalid response mode"))
            #expect(!response.text.contains("apple-form-post"), "nothing is posted to the redirect_uri")
        }
    }

    @Test func otherMalformedRequestsAreErrorPages() async throws {
        try await withSimulator { harness in
            for path in [
                Self.query(clientID: ""), Self.query(redirectURI: "http://app.example.com/callback"),
                Self.query(redirectURI: "https://app.example.com/cb#frag"), Self.query(responseType: "id_token"),
                Self.query(scope: "openid"),
            ] {
                let response = try await harness.get(path)
                #expect(response.status == 400, "\(path)")
                #expect(response.text.contains(#"id="error""#))
            }
            #expect(try await harness.get(Self.query(redirectURI: "http://127.0.0.1:9/callback")).status == 200, "http to loopback is fine")
        }
    }

    @Test func aValidRequestShowsTheConsentSheet() async throws {
        try await withSimulator { harness in
            let response = try await harness.get(Self.query())
            #expect(response.status == 200)
            let page = response.text
            for id in ["email", "first-name", "last-name", "share-email", "hide-email", "continue", "cancel"] {
                #expect(page.contains(#"id="\#(id)""#), "missing control \(id)")
            }
            #expect(page.contains("ada.lovelace@example.com"))
            #expect(!page.contains("<link"), "no external resources")
            #expect(!page.contains("src=\"http"))
        }
    }

    @Test func consentPostsTheCodeWithUserOnlyTheFirstTime() async throws {
        try await withSimulator { harness in
            let first = try await consent(harness, appleID: "grace@example.com", firstName: "Grace", lastName: "Hopper", hide: false)
            #expect(first.action == Self.redirect)
            #expect(first.fields["state"] == "st-123")
            let code = try #require(first.fields["code"])
            let user = try #require(first.fields["user"], "the first authorization carries user")
            let decoded = try #require(try JSONParser.parse(user).object, "user is a JSON-encoded string")
            #expect(decoded["name"]?.object?["firstName"]?.string == "Grace")
            #expect(decoded["name"]?.object?["lastName"]?.string == "Hopper")
            #expect(decoded["email"]?.string == "grace@example.com")

            let keys = try await harness.keySet()
            let idToken = try #require(first.fields["id_token"])
            let verified = try TokenVerifier.verify(
                idToken, keys: { keys[$0] },
                policy: .init(kind: .identityToken, audiences: ["com.example.web"], nonce: .check(expected: "nonce-abc", requireNonce: true),
                    authorizationCode: code),
                now: harness.clock.now)
            #expect(verified.payload["c_hash"]?.string == TokenVerifier.codeHash(code))
            #expect(verified.payload["email"]?.string == "grace@example.com")
            #expect(verified.payload["is_private_email"] == .string("false"))
            #expect(verified.payload["exp"]?.integer == harness.clock.now + 86_400)
            #expect(verified.payload["sub"]?.string == harness.simulator.subject(forAppleID: "grace@example.com"))

            // The web code needs the authorize request's redirect_uri back, exactly.
            #expect(try await harness.exchange(code: code, clientID: "com.example.web").errorCode == "invalid_grant")
            #expect(try await harness.exchange(code: code, clientID: "com.example.web", redirectURI: Self.redirect).status == 200)

            let second = try await consent(harness, appleID: "grace@example.com", firstName: "Other", lastName: "Name", hide: true)
            #expect(second.fields["user"] == nil, "later authorizations never carry user")
            #expect(second.fields["code"] != nil)
            let secondToken = try #require(second.fields["id_token"])
            #expect(try CompactJWS(secondToken).payload["email"]?.string == "grace@example.com", "the first choice stands")
        }
    }

    @Test func hideMyEmailGivesAStableRelayAddress() async throws {
        try await withSimulator { harness in
            let web = try await consent(harness, appleID: "ada.lovelace@example.com", firstName: "Ada", lastName: "", hide: true)
            let userText = try #require(web.fields["user"])
            let user = try #require(try JSONParser.parse(userText).object)
            let relay = try #require(user["email"]?.string)
            #expect(relay.hasSuffix("@private.icloud.com"), "new relay addresses are at private.icloud.com")
            #expect(user["name"]?.object?["lastName"] == nil, "blank parts are left out")
            let token = try CompactJWS(try #require(web.fields["id_token"])).payload
            #expect(token["is_private_email"] == .string("true"))
            let other = try await consent(
                harness, clientID: "com.example.other", appleID: "ada.lovelace@example.com", firstName: "Ada", lastName: "L", hide: true)
            let otherUserText = try #require(other.fields["user"])
            let otherUser = try #require(try JSONParser.parse(otherUserText).object)
            #expect(otherUser["email"]?.string == relay, "one relay address per person and team")
            #expect(try CompactJWS(try #require(other.fields["id_token"])).payload["sub"] == token["sub"])
        }
    }

    @Test func revokingTheTokenMakesTheNextAuthorizationAFirstOneAgain() async throws {
        try await withSimulator { harness in
            let first = try await consent(harness, appleID: "ada@example.com", firstName: "Ada", lastName: "L", hide: false)
            #expect(first.fields["user"] != nil)
            let tokens = try await harness.exchange(
                code: try #require(first.fields["code"]), clientID: "com.example.web", redirectURI: Self.redirect
            ).jsonObject()
            #expect(try await consent(harness, appleID: "ada@example.com", firstName: "Ada", lastName: "L", hide: false).fields["user"] == nil)
            #expect(try await harness.revoke(try #require(tokens["refresh_token"]?.string), clientID: "com.example.web").status == 200)
            #expect(try await consent(harness, appleID: "ada@example.com", firstName: "Ada", lastName: "L", hide: false).fields["user"] != nil)
        }
    }

    @Test func cancelPostsUserCancelledAuthorize() async throws {
        try await withSimulator { harness in
            let page = try await harness.get(Self.query())
            var fields = HTMLForm.hiddenFields(page.text).map { ($0.name, $0.value) }
            fields += [("email", "ada@example.com"), ("action", "cancel")]
            let response = try await harness.postForm("/auth/authorize", fields)
            let form = try #require(HTMLForm(response.text))
            #expect(form.action == Self.redirect)
            #expect(form.fields["error"] == "user_cancelled_authorize")
            #expect(form.fields["state"] == "st-123")
            #expect(form.fields["code"] == nil)
        }
    }

    @Test func queryModeRedirectsWithTheCode() async throws {
        try await withSimulator { harness in
            let page = try await harness.get(Self.query(responseType: "code", responseMode: "query", scope: nil))
            var fields = HTMLForm.hiddenFields(page.text).map { ($0.name, $0.value) }
            fields += [("email", "ada@example.com"), ("action", "continue")]
            let response = try await harness.postForm("/auth/authorize", fields)
            #expect(response.status == 302)
            let location = try #require(response.header("Location"))
            #expect(location.hasPrefix(Self.redirect + "?state=st-123&code="))
            #expect(!location.contains("user="))
        }
    }

    /// Loads the consent sheet, fills it in and submits it; returns the auto-posting form.
    func consent(
        _ harness: SimulatorHarness, clientID: String = "com.example.web", appleID: String, firstName: String, lastName: String,
        hide: Bool
    ) async throws -> HTMLForm {
        let page = try await harness.get(Self.query(clientID: clientID))
        #expect(page.status == 200)
        var fields = HTMLForm.hiddenFields(page.text).map { ($0.name, $0.value) }
        fields += [
            ("email", appleID), ("first_name", firstName), ("last_name", lastName), ("email_choice", hide ? "hide" : "share"),
            ("action", "continue"),
        ]
        let response = try await harness.postForm("/auth/authorize", fields)
        #expect(response.status == 200)
        #expect(response.text.contains(#"<script>document.getElementById("apple-form-post").submit();</script>"#))
        #expect(response.text.contains(#"id="continue""#), "a visible fallback button")
        return try #require(HTMLForm(response.text))
    }
}

/// The form of a page the simulator renders: its action and hidden fields.
struct HTMLForm {
    let action: String
    let fields: [String: String]

    init?(_ page: String) {
        guard let actionStart = page.firstRange(of: #"action=""#) else { return nil }
        let rest = page[actionStart.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        action = Self.unescape(String(rest[..<end]))
        fields = Dictionary(Self.hiddenFields(page).map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    static func hiddenFields(_ page: String) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = []
        var rest = Substring(page)
        while let input = rest.firstRange(of: #"<input type="hidden""#) {
            rest = rest[input.upperBound...]
            guard let close = rest.firstIndex(of: ">") else { break }
            let tag = rest[..<close]
            if let name = attribute("name", in: tag), let value = attribute("value", in: tag) {
                fields.append((unescape(name), unescape(value)))
            }
        }
        return fields
    }

    private static func attribute(_ name: String, in tag: Substring) -> String? {
        guard let start = tag.firstRange(of: " \(name)=\"") else { return nil }
        let rest = tag[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    static func unescape(_ text: String) -> String {
        text.replacing("&quot;", with: "\"").replacing("&#39;", with: "'").replacing("&lt;", with: "<").replacing("&gt;", with: ">")
            .replacing("&amp;", with: "&")
    }
}
