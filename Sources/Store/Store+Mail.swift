import SQLRow

/// docs/guides/passwords-and-email.md: the messages a change writes besides codes (those go in `sendCode`).
extension Store {
    /// A `security_notice` saying `change` happened to `user`'s account from `device`, to the
    /// account's email when it is one a person proved (verified, or Apple's relay address),
    /// in the change's transaction. Nothing without mail.
    static func noticeSecurityChange(
        _ change: String, user: UserRecord, device: String?, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection
    ) throws {
        guard outbox.mail.isOn, user.emailVerified || user.isPrivateEmail else { return }
        // A dash rather than a word: the template is in the user's language, the name is not.
        let device = device.flatMap { $0.isEmpty ? nil : $0 } ?? "—"
        try outbox.mail.enqueue(
            "security_notice", to: user, values: ["change": change, "when": String(now), "device": device], now: now, in: connection)
    }

    /// The device name of `sessionID`'s session, when it has one.
    static func deviceName(sessionID: String?, in connection: any SQLConnection) throws -> String? {
        guard let sessionID else { return nil }
        return try connection.queryOne("SELECT device_name FROM sessions WHERE id = ?", [.text(sessionID)])?.optionalString("device_name")
    }

    /// `account_deleted` to the email the deleted account had (as for a security notice).
    static func noticeAccountDeleted(_ user: UserRecord, now: Int64, outbox: WebhookOutbox, in connection: any SQLConnection) throws {
        guard outbox.mail.isOn, user.emailVerified || user.isPrivateEmail else { return }
        try outbox.mail.enqueue("account_deleted", to: user, values: ["when": String(now)], now: now, in: connection)
    }
}

extension Store {
    /// `PATCH /api/account {"locale"}`: the language of the user's mail (`en` or `ko`). nil
    /// when there is no such user. Not a webhook `user.updated`: no field docs/guides/connecting-your-backend.md names
    /// changes; the audit trail's `user.updated` names `locale`.
    public func setLocale(userID: String, locale: String, now: Int64, audit: AuditContext = AuditContext(actor: .user)) async throws -> UserRecord? {
        try await engine.write { connection -> UserRecord? in
            guard let before = try UserStore.user(id: userID, in: connection) else { return nil }
            guard before.locale != locale else { return before }
            try connection.run("UPDATE users SET locale = ?, updated_at = ? WHERE id = ?", [.text(locale), .integer(now), .text(userID)])
            let after = try UserStore.user(id: userID, in: connection)
            try AuditTrail.recordUpdate(from: before, to: after, context: audit, now: now, in: connection)
            return after
        }
    }
}
