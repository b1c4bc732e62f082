import AppleSimulator
import HTTPClient
import JOSE
import JSON
import OpenSSLCrypto
import Testing
import WireFormat

@Suite struct TokenEndpointTests {
    static let sub = "000123.0123456789abcdef0123456789abcdef.0123"

    @Test func aNativeCodeExchangesForApplesTokenResponse() async throws {
        try await withSimulator { harness in
            let (code, identityToken) = try await harness.nativeCode(extra: [
                ("nonce", .string("n-0S6_WzA2Mj")), ("email", .string("ada@example.com")), ("is_private_email", .bool(false)),
            ])
            let keys = try await harness.keySet()
            let native = try TokenVerifier.verify(
                identityToken, keys: { keys[$0] }, policy: .init(kind: .identityToken, audiences: ["com.example.app"]),
                now: harness.clock.now)
            #expect(native.payload["nonce"]?.string == "n-0S6_WzA2Mj")
            #expect(native.payload["c_hash"]?.string == TokenVerifier.codeHash(code))
            #expect(native.payload["real_user_status"]?.integer == 2)
            #expect(native.payload["nonce_supported"] == .bool(true))
            #expect(native.payload["exp"]?.integer == harness.clock.now + 600)

            let response = try await harness.exchange(code: code)
            #expect(response.status == 200, "\(response.text)")
            #expect(response.header("Cache-Control") == "no-store")
            #expect(response.header("Pragma") == "no-cache")
            #expect(response.header("Content-Type") == "application/json;charset=UTF-8")
            let body = try response.jsonObject()
            #expect(body.keys == ["access_token", "token_type", "expires_in", "refresh_token", "id_token"])
            #expect(body["token_type"]?.string == "Bearer")
            #expect(body["expires_in"]?.integer == 3600)
            let accessToken = try #require(body["access_token"]?.string)
            #expect(body["refresh_token"]?.string?.isEmpty == false)
            let idToken = try #require(body["id_token"]?.string)
            let verified = try TokenVerifier.verify(
                idToken, keys: { keys[$0] }, policy: .init(kind: .exchangedToken, audiences: ["com.example.app"]), now: harness.clock.now)
            let claims = verified.payload
            #expect(verified.header["alg"]?.string == "RS256")
            #expect(claims["iss"]?.string == "https://appleid.apple.com")
            #expect(claims["aud"]?.string == "com.example.app")
            #expect(claims["sub"]?.string == Self.sub)
            #expect(claims["exp"]?.integer == (claims["iat"]?.integer ?? 0) + 86_400)
            #expect(claims["at_hash"]?.string == TokenVerifier.codeHash(accessToken))
            #expect(claims["email"]?.string == "ada@example.com")
            #expect(claims["email_verified"] == .string("true"), "Apple sends the string, not a boolean")
            #expect(claims["is_private_email"] == .string("false"))
            #expect(claims["nonce_supported"] == .bool(true))
            #expect(claims["nonce"]?.string == "n-0S6_WzA2Mj")
            #expect(claims["auth_time"]?.integer != nil)
        }
    }

    @Test func aCodeWorksOnlyOnce() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            #expect(try await harness.exchange(code: code).status == 200)
            let second = try await harness.exchange(code: code)
            #expect(second.status == 400)
            #expect(second.errorCode == "invalid_grant")
            #expect(try second.jsonObject()["error_description"]?.string == "The code has already been used.")
        }
    }

    @Test func aCodeExpiresAfterFiveMinutes() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            harness.clock.advance(by: 301)
            let response = try await harness.exchange(code: code)
            #expect(response.errorCode == "invalid_grant")
        }
    }

    @Test func aCodeIsBoundToItsClient() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode(clientID: "com.example.app")
            let response = try await harness.exchange(code: code, clientID: "com.example.web")
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_grant")
            #expect(try response.jsonObject()["error_description"]?.string?.hasPrefix("client_id mismatch") == true)
            #expect(try await harness.exchange(code: code).status == 200, "a refused attempt does not use the code up")
        }
    }

    @Test func aRedirectURIIsRefusedForANativeCode() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let response = try await harness.exchange(code: code, redirectURI: "https://example.com/callback")
            #expect(response.errorCode == "invalid_grant")
        }
    }

    @Test func aCodeIssuedWithARedirectURINeedsTheSameOne() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode(extra: [("redirect_uri", .string("https://example.com/callback"))])
            #expect(try await harness.exchange(code: code).errorCode == "invalid_grant")
            #expect(try await harness.exchange(code: code, redirectURI: "https://example.com/other").errorCode == "invalid_grant")
            #expect(try await harness.exchange(code: code, redirectURI: "https://example.com/callback").status == 200)
        }
    }

    enum BadSecret: String, CaseIterable {
        case derSignature, wrongSubject, wrongIssuer, wrongAudience, expired, lifetimeOverSixMonths, wrongKeyID, missingKeyID, es384
        /// `exp - iat` once overflowed (a crash of the simulator) for `iat` = -2^63.
        case absurdIssuedAt
    }

    @Test(arguments: BadSecret.allCases)
    func aClientSecretApplesRulesRefuseIsInvalidClient(_ flaw: BadSecret) async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let now = harness.clock.now
            var header = JSONObject([("alg", .string("ES256")), ("kid", .string(harness.simulator.keyID))])
            var claims = JSONObject([
                ("iss", .string(harness.simulator.teamID)), ("iat", .integer(now - 60)), ("exp", .integer(now + 3600)),
                ("aud", .string("https://appleid.apple.com")), ("sub", .string("com.example.app")),
            ])
            switch flaw {
            case .derSignature: break
            case .wrongSubject: claims["sub"] = .string("com.example.web")
            case .wrongIssuer: claims["iss"] = .string("OTHERTEAM1")
            case .wrongAudience: claims["aud"] = .string("https://appleid.apple.com/")
            case .expired: claims["exp"] = .integer(now - 1)
            case .lifetimeOverSixMonths: claims["exp"] = .integer(now - 60 + 15_777_001)
            case .wrongKeyID: header["kid"] = .string("OTHERKEY01")
            case .missingKeyID: header["kid"] = nil
            case .es384: header["alg"] = .string("ES384")
            case .absurdIssuedAt: claims["iat"] = .integer(Int64.min)
            }
            var secret = try CompactJWS.signES256(header: header, payload: claims, key: harness.developerKey)
            if flaw == .derSignature {
                let parts = secret.split(separator: ".")
                let raw = try #require(Base64.url.decode(String(parts[2])))
                secret = String(parts[0]) + "." + String(parts[1]) + "." + Base64.url.encode(derSignature(raw: raw))
            }
            let response = try await harness.postForm("/auth/token", [
                ("client_id", "com.example.app"), ("client_secret", secret), ("code", code), ("grant_type", "authorization_code"),
            ])
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_client", "\(flaw): \(response.text)")
            // The same secret with the flaw fixed works, so the flaw is what was refused.
            #expect(try await harness.exchange(code: code).status == 200)
        }
    }

    /// What `siwa-server doctor` relies on, as Apple answers it: a made-up code with a good
    /// secret is `invalid_grant` (the secret passed), never `invalid_client`.
    @Test func aMadeUpCodeWithAGoodSecretIsInvalidGrant() async throws {
        try await withSimulator { harness in
            for clientID in ["com.example.app", "com.example.web"] {
                let response = try await harness.exchange(code: "siwa-doctor.made-up", clientID: clientID)
                #expect(response.status == 400)
                #expect(response.errorCode == "invalid_grant")
            }
        }
    }

    @Test func aLifetimeOfExactlySixMonthsIsAccepted() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let now = harness.clock.now
            let header = JSONObject([("alg", .string("ES256")), ("kid", .string(harness.simulator.keyID))])
            let claims = JSONObject([
                ("iss", .string(harness.simulator.teamID)), ("iat", .integer(now)), ("exp", .integer(now + 15_777_000)),
                ("aud", .string("https://appleid.apple.com")), ("sub", .string("com.example.app")),
            ])
            let secret = try CompactJWS.signES256(header: header, payload: claims, key: harness.developerKey)
            let response = try await harness.postForm("/auth/token", [
                ("client_id", "com.example.app"), ("client_secret", secret), ("code", code), ("grant_type", "authorization_code"),
            ])
            #expect(response.status == 200, "\(response.text)")
        }
    }

    @Test func aSecretSignedByAnotherKeyIsInvalidClient() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let other = ClientSecretMinter(teamID: harness.simulator.teamID, keyID: harness.simulator.keyID, key: try P256PrivateKey.generate())
            let response = try await harness.postForm("/auth/token", [
                ("client_id", "com.example.app"), ("client_secret", try other.mint(for: "com.example.app", now: harness.clock.now)),
                ("code", code), ("grant_type", "authorization_code"),
            ])
            #expect(response.errorCode == "invalid_client")
        }
    }

    @Test func aJSONBodyIsRefused() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let json = JSONWriter.string(.object(JSONObject([
                ("client_id", .string("com.example.app")), ("client_secret", .string(try harness.secret(for: "com.example.app"))),
                ("code", .string(code)), ("grant_type", .string("authorization_code")),
            ])))
            let declared = try await harness.post("/auth/token", contentType: "application/json", body: json)
            #expect(declared.status == 400)
            #expect(declared.errorCode == "invalid_request")
            let mislabelled = try await harness.post("/auth/token", contentType: "application/x-www-form-urlencoded", body: json)
            #expect(mislabelled.status == 400)
            #expect(mislabelled.errorCode == "unsupported_grant_type")
            #expect(try await harness.exchange(code: code).status == 200, "neither attempt used the code")
        }
    }

    @Test func grantTypeMistakesGetApplesErrors() async throws {
        try await withSimulator { harness in
            let secret = try harness.secret(for: "com.example.app")
            let misspelled = try await harness.postForm("/auth/token", [
                ("client_id", "com.example.app"), ("client_secret", secret), ("grand_type", "authorization_code"), ("code", "x"),
            ])
            #expect(misspelled.errorCode == "invalid_request")
            let unknown = try await harness.postForm("/auth/token", [
                ("client_id", "com.example.app"), ("client_secret", secret), ("grant_type", "password"),
            ])
            #expect(unknown.errorCode == "unsupported_grant_type")
        }
    }

    @Test func aRefreshGrantReturnsNoNewRefreshToken() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode(extra: [("email", .string("ada@example.com"))])
            let refreshToken = try #require(try await harness.exchange(code: code).jsonObject()["refresh_token"]?.string)
            let response = try await harness.refresh(refreshToken)
            #expect(response.status == 200, "\(response.text)")
            let body = try response.jsonObject()
            #expect(body["refresh_token"] == nil)
            #expect(body["token_type"]?.string == "Bearer")
            #expect(body["expires_in"]?.integer == 3600)
            let keys = try await harness.keySet()
            let idToken = try #require(body["id_token"]?.string)
            let verified = try TokenVerifier.verify(
                idToken, keys: { keys[$0] }, policy: .init(kind: .exchangedToken, audiences: ["com.example.app"]), now: harness.clock.now)
            #expect(verified.payload["sub"]?.string == Self.sub)
            #expect(verified.payload["email_verified"] == .string("true"))
            #expect(try await harness.refresh(refreshToken, clientID: "com.example.web").errorCode == "invalid_grant")
            // Pitfall 8: the refresh token sent as `code`.
            let asCode = try await harness.postForm("/auth/token", [
                ("client_id", "com.example.app"), ("client_secret", try harness.secret(for: "com.example.app")),
                ("grant_type", "refresh_token"), ("code", refreshToken),
            ])
            #expect(asCode.errorCode == "unsupported_grant_type")
            let wrongGrant = try await harness.exchange(code: refreshToken)
            #expect(wrongGrant.errorCode == "invalid_grant")
        }
    }

    @Test func aRevokedRefreshTokenNoLongerRefreshes() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let tokens = try await harness.exchange(code: code).jsonObject()
            let refreshToken = try #require(tokens["refresh_token"]?.string)
            let revoked = try await harness.revoke(refreshToken, hint: "refresh_token")
            #expect(revoked.status == 200)
            #expect(revoked.body.isEmpty)
            let response = try await harness.refresh(refreshToken)
            #expect(response.status == 400)
            #expect(response.errorCode == "invalid_grant")
            #expect(try response.jsonObject()["error_description"]?.string == "The token has expired or has been revoked.")
        }
    }

    @Test func revokingGarbageIsStill200WithAnEmptyBody() async throws {
        try await withSimulator { harness in
            let response = try await harness.revoke("not-a-token-at-all")
            #expect(response.status == 200)
            #expect(response.body.isEmpty)
            let badClient = try await harness.postForm("/auth/revoke", [
                ("client_id", "com.example.app"), ("client_secret", "garbage"), ("token", "x"),
            ])
            #expect(badClient.errorCode == "invalid_client")
        }
    }

    @Test func revokingAnAccessTokenEndsTheGrant() async throws {
        try await withSimulator { harness in
            let (code, _) = try await harness.nativeCode()
            let tokens = try await harness.exchange(code: code).jsonObject()
            let accessToken = try #require(tokens["access_token"]?.string)
            #expect(try await harness.revoke(accessToken, hint: "access_token").status == 200)
            #expect(try await harness.refresh(try #require(tokens["refresh_token"]?.string)).errorCode == "invalid_grant")
        }
    }
}

/// Re-encodes a raw R||S ECDSA signature as DER, the form OpenSSL and Java produce.
func derSignature(raw: [UInt8]) -> [UInt8] {
    func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var value = Array(bytes.drop { $0 == 0 })
        if value.isEmpty { value = [0] }
        if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
        return [0x02, UInt8(value.count)] + value
    }
    let body = integer(raw[0..<32]) + integer(raw[32..<64])
    return [0x30, UInt8(body.count)] + body
}
