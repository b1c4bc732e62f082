import JOSE
import JSON
import OpenSSLCrypto

/// The control operations, shared by the `/sim/` routes and the in-process helpers.
extension SimulatorContext {
    func issueNativeCode(
        sub: String, clientID: String, nonce: String?, email: String?, isPrivateEmail: Bool?, redirectURI: String?
    ) throws -> NativeCode {
        let now = self.now
        let code = OpaqueToken.code.make()
        let teamID = self.teamID
        let (subject, key) = store.change { state -> (IdentityTokenMinter.Subject, SigningKeyRing.SigningKey) in
            state.prune(now: now)
            _ = state.person(sub: sub, teamID: teamID, now: now)
            let grantKey = Grant.key(sub: sub, clientID: clientID)
            var grant = state.grants[grantKey] ?? Grant(sub: sub, clientID: clientID, email: nil, isPrivateEmail: false, createdAt: now)
            if let email {
                grant.email = email
                grant.isPrivateEmail = isPrivateEmail ?? email.hasSuffix("@privaterelay.appleid.com")
            } else if let isPrivateEmail {
                grant.isPrivateEmail = isPrivateEmail
            }
            state.grants[grantKey] = grant
            state.codes[code] = AuthorizationCode(
                code: code, sub: sub, clientID: clientID, redirectURI: redirectURI, nonce: nonce, email: grant.email,
                isPrivateEmail: grant.isPrivateEmail, authTime: now, issuedAt: now)
            let subject = IdentityTokenMinter.Subject(
                sub: sub, clientID: clientID, email: grant.email, isPrivateEmail: grant.isPrivateEmail, nonce: nonce, authTime: now)
            return (subject, state.signingKeys.current)
        }
        let token = try identityTokens.mint(for: subject, flavor: .native(code: code), now: now, key: key)
        return NativeCode(code: code, identityToken: token, sub: sub)
    }

    /// Signs a notification; resolves `aud` and, for email events, the address.
    func signNotification(_ event: NotificationEvent) throws -> (payload: String, jti: String) {
        let now = self.now
        var event = event
        let (audience, grantEmail, key) = store.read { state in
            let audience = event.clientID ?? state.firstClient(of: event.sub) ?? NotificationEvent.fallbackAudience
            let grantEmail = state.grants[Grant.key(sub: event.sub, clientID: audience)]?.email ?? state.persons[event.sub]?.relayEmail
            return (audience, grantEmail, state.signingKeys.current)
        }
        if event.isEmailEvent, event.email == nil { event.email = grantEmail }
        let jti = NotificationEvent.makeJTI()
        // Real deliveries carry milliseconds (APPLE.md §7); the sub-second part is made up.
        let eventTime = now * 1000 + Int64(SecureRandom.bytes(2).reduce(0) { $0 << 8 | Int($1) } % 1000)
        let claims = event.claims(audience: audience, now: now, eventTimeMilliseconds: eventTime, jti: jti)
        let header = JSONObject([("kid", .string(key.kid)), ("alg", .string("RS256"))])
        return (try CompactJWS.signRS256(header: header, payload: claims, key: key.key), jti)
    }

    /// Returns how many tokens died.
    func revokeConsent(sub: String, clientID: String) -> Int {
        store.change { $0.revokeGrant(sub: sub, clientID: clientID) }
    }

    func deleteAccount(sub: String) -> Bool {
        store.change { $0.deleteAccount(sub: sub) }
    }

    /// Returns the published kids, oldest first; the last signs.
    func rotateKeys() throws -> [String] {
        try store.change { state in
            try state.signingKeys.rotate(makeSigningKey)
            return state.signingKeys.keys.map(\.kid)
        }
    }
}
