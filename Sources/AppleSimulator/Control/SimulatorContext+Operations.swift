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
        let (subject, key) = store.change { state -> (IdentityTokenMinter.Subject, SigningKeyRing.SigningKey) in
            state.prune(now: now)
            // After a transfer a person named by the old team's `sub` signs in with the new one's.
            let grant = state.authorize(sub: sub, clientID: clientID, email: email, isPrivateEmail: isPrivateEmail, now: now)
            state.codes[code] = AuthorizationCode(
                code: code, sub: grant.sub, clientID: clientID, redirectURI: redirectURI, nonce: nonce, email: grant.email,
                isPrivateEmail: grant.isPrivateEmail, authTime: now, issuedAt: now)
            let subject = IdentityTokenMinter.Subject(
                sub: grant.sub, clientID: clientID, email: grant.email, isPrivateEmail: grant.isPrivateEmail, nonce: nonce, authTime: now,
                transferSub: state.transferSub(forSub: grant.sub, clientID: clientID, now: now))
            return (subject, state.signingKeys.current)
        }
        let token = try identityTokens.mint(for: subject, flavor: .native(code: code), now: now, key: key)
        return NativeCode(code: code, identityToken: token, sub: subject.sub, transferSub: subject.transferSub)
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

extension SimulatorContext {
    /// Moves an app to `toTeam` (made when the simulator has not seen it).
    func transfer(clientID: String, toTeam teamID: String) throws(ControlFailure) -> SimulatorTransfer {
        let team = try makeTeam(teamID)
        let now = self.now
        let moved = store.change { state -> AppTransfer? in
            guard state.owner(of: clientID) != teamID else { return nil }
            return state.transfer(clientID: clientID, to: teamID, now: now)
        }
        guard let transfer = moved else { throw ControlFailure("\(clientID) already belongs to team \(teamID).") }
        return SimulatorTransfer(
            clientID: clientID, fromTeamID: transfer.fromTeam, toTeam: team, users: transfer.users.count,
            transferredAt: transfer.transferredAt, windowEndsAt: transfer.windowEndsAt)
    }

    /// Records that the person has authorized the app, as a sign-in would, without minting
    /// anything: for seeding many users fast.
    func recordAuthorization(sub: String, clientID: String, email: String?, isPrivateEmail: Bool?) {
        let now = self.now
        store.change { state in _ = state.authorize(sub: sub, clientID: clientID, email: email, isPrivateEmail: isPrivateEmail, now: now) }
    }

    /// The `sub` the person behind `sub` has in `teamID`, as that team's apps would see it.
    func subject(of sub: String, inTeam teamID: String) -> String? {
        store.read { state in
            guard let person = state.persons[sub] else { return nil }
            return person.teamID == teamID ? sub : Person.subject(teamID: teamID, account: person.account)
        }
    }
}
