import Accounts
import Glibc
import JSON
import Logging
import Store

/// `siwa-server users …` (docs/guides/connecting-your-backend.md): the admin API's operations on the configured database, for
/// an operator at a shell. Each change is the same Store operation the API makes, so it emits
/// the same webhook event and a deletion queues the same revocation at Apple. Output is for
/// people, or with `json` the API's JSON for scripts.
public struct UserAdministration: Sendable {
    /// What a command prints and how it ends.
    public struct Outcome: Sendable, Equatable {
        /// For stdout when `exitCode` is 0, else for stderr.
        public let text: String
        /// 0 done; 1 no such user, or the external id belongs to another user.
        public let exitCode: Int32

        static func done(_ text: String) -> Outcome { Outcome(text: text, exitCode: 0) }
        static func refused(_ text: String) -> Outcome { Outcome(text: text, exitCode: 1) }
    }

    /// The database could not be opened or read (exit 1; a setting at fault is a
    /// `ConfigurationError`, exit 2).
    public struct DatabaseFailure: Error, CustomStringConvertible {
        public let description: String
    }

    let store: Store
    let configuration: Configuration
    let json: Bool
    let clock: @Sendable () -> Int64

    /// Opens the configured database. A SQLite file that does not exist is refused rather than
    /// created: the command line looks at a server's database, it does not start one. Throws
    /// `ConfigurationError` naming the setting at fault, or `DatabaseFailure`.
    public static func open(
        _ configuration: Configuration, json: Bool, logger: Logger, clock: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }
    ) throws -> UserAdministration {
        if !Store.isPostgres(configuration.database), access(configuration.database, F_OK) != 0 {
            throw ConfigurationError(
                .database, "no database at \(configuration.database) (start the server once, or run siwa-server migrate)")
        }
        do {
            let (store, _) = try Store.open(configuration, connections: 2, logger: logger)
            return UserAdministration(store: store, configuration: configuration, json: json, clock: clock)
        } catch let failure as DataKeyFile.Failure {
            throw ConfigurationError(.dataKey, failure.description)
        } catch {
            throw DatabaseFailure(description: "cannot open the database \(Store.redacted(configuration.database)): \(error)")
        }
    }

    public func close() { store.close() }

    // MARK: - Operations

    /// One page of users, and the `--cursor` of the next when there is one. Arguments are
    /// checked first (`problem(limit:cursor:)`).
    public func list(email: String?, appleSub: String?, externalID: String?, limit: Int, cursor: String?) async throws -> Outcome {
        let filter = UserFilter(email: email, appleSub: appleSub, externalID: externalID)
        let found = try await store.users.list(matching: filter, after: cursor.flatMap(UserListQuery.id(inCursor:)), limit: limit + 1)
        let page = Array(found.prefix(limit))
        let next = found.count > limit ? page.last.map { UserListQuery.cursor(after: $0.id) } : nil
        if json {
            return .done(JSONWriter.string(.object(JSONObject([
                ("users", .array(page.map(UserJSON.value))), ("next_cursor", next.map(JSONValue.string) ?? .null),
            ]))))
        }
        guard !page.isEmpty else { return .done("no users") }
        var lines = [Self.columns(["id", "apple_sub", "email", "external_id", "created_at"])]
        for user in page {
            lines.append(Self.columns([user.id, user.appleSub ?? "-", user.email ?? "-", user.externalID ?? "-", RFC3339.format(user.createdAt)]
                .map(Self.printable)))
        }
        if let next { lines.append("more: siwa-server users list --cursor \(next)" + (limit == UserListQuery.defaultLimit ? "" : " --limit \(limit)")) }
        return .done(lines.joined(separator: "\n"))
    }

    /// The user and the sessions that still authenticate.
    public func show(id: String) async throws -> Outcome {
        guard let user = try await store.users.user(id: id) else { return Self.noSuchUser(id) }
        let sessions = try await store.sessions.list(
            userID: id, now: clock(), idleTTL: Int64(configuration.sessionIdleTTL.components.seconds))
        if json { return .done(JSONWriter.string(AdminAPI.userWithSessions(user, sessions))) }
        var lines = ["user \(user.id)"]
        func field(_ name: String, _ value: String) { lines.append("  " + name.padding(17) + Self.printable(value)) }
        field("apple_sub", user.appleSub ?? "-")
        var facts = [user.emailVerified ? "verified" : "unverified"]
        if user.isPrivateEmail { facts.append("private relay") }
        if let forwarding = user.emailForwarding { facts.append("forwarding \(forwarding.rawValue)") }
        field("email", user.email.map { "\($0) (\(facts.joined(separator: ", ")))" } ?? "-")
        let name = [user.givenName, user.familyName].compactMap { $0 }.joined(separator: " ")
        field("name", name.isEmpty ? "-" : name)
        field("external_id", user.externalID ?? "-")
        field("apple_credential", user.appleCredential.rawValue)
        field("real_user_status", user.realUserStatus.rawValue)
        field("sign_in_methods", user.signInMethods.joined(separator: ", "))
        field("created_at", RFC3339.format(user.createdAt))
        field("updated_at", RFC3339.format(user.updatedAt))
        field("sessions", String(sessions.count))
        for session in sessions {
            lines.append("    \(session.id)  \(session.deviceName.map { Self.printable("\"\($0)\"") } ?? "-")  created \(RFC3339.format(session.createdAt))"
                + "  last seen \(RFC3339.format(session.lastSeenAt))  expires \(RFC3339.format(session.expiresAt))")
        }
        return .done(lines.joined(separator: "\n"))
    }

    /// Deletes the user as `DELETE /admin/users/{id}` does (webhook reason `admin`). The
    /// revocation at Apple is queued, due at once: the running server's revocation worker sends
    /// it and retries until Apple accepts (this process does not wait for Apple).
    public func delete(id: String) async throws -> Outcome {
        let now = clock()
        guard let deletion = try await store.deleteUser(userID: id, reason: .admin, now: now, firstAttemptAt: now, audit: .admin) else {
            return Self.noSuchUser(id)
        }
        let revocation = deletion.revocation == nil ? "none" : "pending"
        if json {
            return .done(JSONWriter.string(.object(JSONObject([
                ("status", .string("deleted")), ("id", .string(id)), ("apple_revocation", .string(revocation)),
            ]))))
        }
        var lines = ["deleted \(id) (apple_sub \(deletion.user.appleSub ?? "none")); its sessions have ended"]
        if deletion.revocation != nil {
            lines.append("the revocation of its Apple token is queued: a running siwa-server on this database sends it to Apple within seconds, and retries until Apple accepts")
        } else {
            lines.append("no Apple token was stored: nothing to revoke")
        }
        if configuration.webhookURL != nil { lines.append("user.deleted (reason admin) is queued for the webhook receiver") }
        return .done(lines.joined(separator: "\n"))
    }

    /// Ends every session of the user; a running server refuses them within a second.
    public func endSessions(id: String) async throws -> Outcome {
        guard let ended = try await store.endSessions(userID: id, now: clock(), audit: .admin) else { return Self.noSuchUser(id) }
        if json { return .done(JSONWriter.string(.object(JSONObject([("id", .string(id)), ("ended_sessions", .integer(Int64(ended)))])))) }
        return .done("ended \(ended) session\(ended == 1 ? "" : "s") of \(id)")
    }

    /// Sets the user's external id, or clears it with nil. The value is checked first
    /// (`problem(externalID:)`).
    public func setExternalID(id: String, value: String?) async throws -> Outcome {
        let user: UserRecord?
        do {
            user = try await store.setExternalID(userID: id, externalID: value, now: clock())
        } catch is ExternalIDTaken {
            return .refused("another user already has external_id \(JSONWriter.string(.string(value ?? "")))")
        }
        guard let user else { return Self.noSuchUser(id) }
        if json { return .done(JSONWriter.string(UserJSON.value(user))) }
        return .done(user.externalID.map { "\(id) now has external_id \(JSONWriter.string(.string($0)))" } ?? "\(id) has no external_id now")
    }

    // MARK: - Arguments

    /// What is wrong with `--limit` or `--cursor`, or nil.
    public static func problem(limit: Int, cursor: String?) -> String? {
        if !(1...UserStore.maximumPage).contains(limit) { return "--limit must be from 1 to \(UserStore.maximumPage)" }
        if let cursor, UserListQuery.id(inCursor: cursor) == nil { return "--cursor is not one this command printed" }
        return nil
    }

    /// What is wrong with an external id, or nil (the API's rules).
    public static func problem(externalID: String) -> String? {
        do {
            _ = try ExternalIDPatch.validated(externalID)
            return nil
        } catch {
            return error.description
        }
    }

    private static func noSuchUser(_ id: String) -> Outcome {
        .refused("no user \(JSONWriter.string(.string(id)))")
    }

    /// Text fit for a terminal: names and device names come from clients, and an escape
    /// sequence in one must not act on the operator's terminal. Control and format characters
    /// are shown as `\u{…}`.
    static func printable(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            switch scalar.properties.generalCategory {
            case .control, .format: shown += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// Columns separated by two spaces, each but the last padded to a fixed width.
    private static func columns(_ values: [String]) -> String {
        let widths = [36, 44, 40, 24]
        return values.enumerated().map { index, value in index < widths.count ? value.padding(widths[index]) : value }
            .joined(separator: "  ")
    }
}

extension String {
    /// Padded with spaces to `width` Characters (never cut).
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
