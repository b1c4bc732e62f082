import SQLRow

/// A user the sending team has yet to export.
public struct TransferExportCandidate: Sendable, Equatable {
    public let userID: String
    /// The `sub` Apple gave this team: what the sender's call names, and nothing that ever
    /// leaves this database.
    public let appleSub: String
    public let externalID: String?
}

/// One line of the hand-over CSV (`user_id,external_id,transfer_sub`): no `sub`, no email.
public struct TransferRecord: Sendable, Equatable {
    public let userID: String
    public let externalID: String?
    public let transferSub: String

    public init(userID: String, externalID: String?, transferSub: String) {
        self.userID = userID
        self.externalID = externalID
        self.transferSub = transferSub
    }
}

/// What recording the sender's `transfer_sub` did.
public enum ExportRecording: Sendable, Equatable {
    case recorded
    /// The user was deleted meanwhile.
    case userGone
    /// Another user already has this `transfer_sub`: Apple would never give one twice.
    case transferSubTaken(byUserID: String)
}

/// What recording the CSV's rows did, before any is exchanged at Apple.
public struct RecordedTransfers: Sendable, Equatable {
    public var recorded = 0
    /// Already moved to their new `sub` (by an earlier run, or by signing in).
    public var alreadyImported = 0
    /// Rows naming no user of this database, by id or by external id.
    public var unknown: [TransferRecord] = []
    /// Rows whose `transfer_sub` another user here already has, with that user.
    public var conflicting: [(record: TransferRecord, holder: String)] = []

    public init() {}

    public static func == (lhs: RecordedTransfers, rhs: RecordedTransfers) -> Bool {
        lhs.recorded == rhs.recorded && lhs.alreadyImported == rhs.alreadyImported && lhs.unknown == rhs.unknown
            && lhs.conflicting.map(\.record) == rhs.conflicting.map(\.record) && lhs.conflicting.map(\.holder) == rhs.conflicting.map(\.holder)
    }
}

/// What moving an imported user to their new `sub` did.
public enum ImportMove: Sendable, Equatable {
    case moved(UserRecord)
    /// The user already had the new `sub` (they signed in with it during the window).
    case alreadyMoved
    /// Another user here already has the new `sub` (they signed in as a new user before the
    /// transfer was recorded): nothing changed, the two accounts are left for a person to judge.
    case subTaken(byUserID: String)
    /// Not waiting for this `transfer_sub` any more (imported meanwhile, or deleted).
    case notPending
}

/// `transfer status`'s numbers.
public struct TransferStatus: Sendable, Equatable {
    public let users: Int
    public let exported: Int
    public let imported: Int
    /// Users still to do in the current step: before any import, users not exported; once
    /// importing, recorded users not imported. Failed ones are not counted here.
    public let pending: Int
    /// Users whose latest attempt failed.
    public let failed: Int
    /// When the first import started, from which Apple's 60 days are counted; nil before.
    public let windowStartedAt: Int64?
    /// Users without an Apple ID (password accounts): nothing to transfer, so skipped.
    public var withoutAppleID = 0
}

/// Each user's way through a team transfer (docs/guides/team-transfer.md, table `team_transfers`), so that
/// `transfer export` and `transfer import` resume where they stopped, and a sign-in during the
/// window finds its user by `transfer_sub`. Every call is one transaction.
public struct TeamTransferStore: Sendable {
    private let engine: any StoreEngine
    private let outbox: WebhookOutbox

    init(engine: any StoreEngine, outbox: WebhookOutbox) {
        self.engine = engine
        self.outbox = outbox
    }

    /// `server_state` key of the first import's time (Unix seconds as decimal text).
    static let windowKey = "team_transfer.window_started_at"

    // MARK: - Sending team

    /// Users with an Apple ID not yet exported for `target`, in id order after `afterUserID`.
    /// A user without one (a password account) has nothing Apple could transfer.
    public func pendingExports(target: String, after afterUserID: String, limit: Int) async throws -> [TransferExportCandidate] {
        try await engine.read { connection in
            try connection.query(
                """
                SELECT u.id, u.apple_sub, u.external_id FROM users u LEFT JOIN team_transfers t ON t.user_id = u.id
                WHERE u.id > ? AND u.apple_sub IS NOT NULL
                    AND (t.user_id IS NULL OR t.target_team <> ? OR t.exported_at IS NULL OR t.imported_at IS NOT NULL)
                ORDER BY u.id LIMIT ?
                """,
                [.text(afterUserID), .text(target), .integer(Int64(limit))]
            ).map { row in
                TransferExportCandidate(
                    userID: try row.string("id"), appleSub: try row.string("apple_sub"), externalID: try row.optionalString("external_id"))
            }
        }
    }

    /// How many users there are, how many of them are already exported for `target`, and how
    /// many have no Apple ID (skipped: there is nothing to transfer for them).
    public func exportProgress(target: String) async throws -> (users: Int, exported: Int, withoutAppleID: Int) {
        try await engine.read { connection in
            let users = try connection.queryOne("SELECT COUNT(*) AS users, COUNT(apple_sub) AS apple FROM users")
            let exported = try connection.queryOne(
                "SELECT COUNT(*) FROM team_transfers WHERE target_team = ? AND exported_at IS NOT NULL AND imported_at IS NULL",
                [.text(target)])?.int(0) ?? 0
            let all = try users?.int("users") ?? 0
            let withAppleID = try users?.int("apple") ?? 0
            return (all, exported, all - withAppleID)
        }
    }

    /// Records the `transfer_sub` Apple gave for `target`. A new export ends any earlier import
    /// window this database knew (it is the sender now).
    public func recordExport(userID: String, target: String, transferSub: String, now: Int64) async throws -> ExportRecording {
        try await engine.write { connection in
            guard try UserStore.user(id: userID, in: connection) != nil else { return .userGone }
            if let holder = try Self.holder(of: transferSub, other: userID, in: connection) { return .transferSubTaken(byUserID: holder) }
            let earlier = try TransferRow.load(userID: userID, in: connection)
            try TransferRow(
                userID: userID, targetTeam: target, transferSub: transferSub, exportedAt: now, importedAt: nil,
                attempts: earlier?.targetTeam == target ? earlier?.attempts ?? 0 : 0, lastError: nil, updatedAt: now
            ).save(in: connection)
            try connection.run("DELETE FROM server_state WHERE key = ?", [.text(Self.windowKey)])
            try AuditTrail.record(.transferExported, userID: userID, detail: AuditTrail.detail(["target_team": target]), context: .system, now: now, in: connection)
            return .recorded
        }
    }

    /// Apple refused the user's export (or something else failed): the reason and one more
    /// attempt are recorded; a run after this one tries again.
    public func recordExportFailure(userID: String, target: String, error: String, now: Int64) async throws {
        try await engine.write { connection in
            guard try UserStore.user(id: userID, in: connection) != nil else { return }
            var row = try TransferRow.load(userID: userID, in: connection)
                ?? TransferRow(userID: userID, targetTeam: target, transferSub: nil, exportedAt: nil, importedAt: nil, attempts: 0, lastError: nil, updatedAt: now)
            if row.targetTeam != target {
                row = TransferRow(userID: userID, targetTeam: target, transferSub: nil, exportedAt: nil, importedAt: nil, attempts: 0, lastError: nil, updatedAt: now)
            }
            row.attempts += 1
            row.lastError = String(error.prefix(200))
            row.updatedAt = now
            try row.save(in: connection)
        }
    }

    /// The teams this database's users were exported for and not yet imported by: the
    /// receiving team's, on the copy it was given.
    public func exportTargets() async throws -> Set<String> {
        try await engine.read { connection in
            Set(try connection.query(
                "SELECT DISTINCT target_team FROM team_transfers WHERE exported_at IS NOT NULL AND imported_at IS NULL"
            ).map { try $0.string(0) })
        }
    }

    /// Every user exported for `target`, in id order: the lines of the CSV.
    public func exported(target: String) async throws -> [TransferRecord] {
        try await engine.read { connection in
            try connection.query(
                """
                SELECT t.user_id, u.external_id, t.transfer_sub FROM team_transfers t JOIN users u ON u.id = t.user_id
                WHERE t.target_team = ? AND t.exported_at IS NOT NULL AND t.imported_at IS NULL ORDER BY t.user_id
                """,
                [.text(target)]
            ).map { row in
                TransferRecord(userID: try row.string("user_id"), externalID: try row.optionalString("external_id"), transferSub: try row.string("transfer_sub"))
            }
        }
    }

    // MARK: - Receiving team

    /// The first step of an import, one transaction per `batchSize` rows: each row's
    /// `transfer_sub` recorded for its user (found by id, else by external id), and that user's
    /// Apple tokens dropped (they were issued to the previous team). The window's start is set
    /// by the first import. Users already imported are left alone.
    public func recordImports(_ records: [TransferRecord], team: String, now: Int64, batchSize: Int = 500) async throws -> RecordedTransfers {
        var outcome = RecordedTransfers()
        var start = 0
        repeat {
            let batch = Array(records[start..<min(start + batchSize, records.count)])
            let part = try await engine.write { connection -> RecordedTransfers in
                if try ServerState.get(Self.windowKey, in: connection) == nil {
                    try ServerState.set(Self.windowKey, Array(String(now).utf8), in: connection)
                }
                var part = RecordedTransfers()
                for record in batch {
                    try Self.recordImport(record, team: team, now: now, into: &part, in: connection)
                }
                return part
            }
            outcome.recorded += part.recorded
            outcome.alreadyImported += part.alreadyImported
            outcome.unknown += part.unknown
            outcome.conflicting += part.conflicting
            start += batchSize
        } while start < records.count
        return outcome
    }

    private static func recordImport(
        _ record: TransferRecord, team: String, now: Int64, into outcome: inout RecordedTransfers, in connection: any SQLConnection
    ) throws {
        var userID = try connection.queryOne("SELECT id FROM users WHERE id = ?", [.text(record.userID)])?.string(0)
        if userID == nil, let externalID = record.externalID {
            userID = try connection.queryOne("SELECT id FROM users WHERE external_id = ?", [.text(externalID)])?.string(0)
        }
        guard let userID else {
            outcome.unknown.append(record)
            return
        }
        let earlier = try TransferRow.load(userID: userID, in: connection)
        if let earlier, earlier.transferSub == record.transferSub, earlier.importedAt != nil {
            outcome.alreadyImported += 1
            return
        }
        if let holder = try holder(of: record.transferSub, other: userID, in: connection) {
            outcome.conflicting.append((record, holder))
            return
        }
        let same = earlier?.transferSub == record.transferSub
        try TransferRow(
            userID: userID, targetTeam: team, transferSub: record.transferSub, exportedAt: earlier?.exportedAt, importedAt: nil,
            attempts: same ? earlier?.attempts ?? 0 : 0, lastError: same ? earlier?.lastError : nil, updatedAt: now
        ).save(in: connection)
        try AppleTokenVault.drop(userID: userID, in: connection)
        outcome.recorded += 1
    }

    /// Users whose `transfer_sub` for `team` awaits exchange, in id order after `afterUserID`.
    public func pendingImports(team: String, after afterUserID: String, limit: Int) async throws -> [TransferRecord] {
        try await engine.read { connection in
            try connection.query(
                """
                SELECT t.user_id, u.external_id, t.transfer_sub FROM team_transfers t JOIN users u ON u.id = t.user_id
                WHERE t.target_team = ? AND t.transfer_sub IS NOT NULL AND t.imported_at IS NULL AND t.user_id > ?
                ORDER BY t.user_id LIMIT ?
                """,
                [.text(team), .text(afterUserID), .integer(Int64(limit))]
            ).map { row in
                TransferRecord(userID: try row.string("user_id"), externalID: try row.optionalString("external_id"), transferSub: try row.string("transfer_sub"))
            }
        }
    }

    /// How many users await exchange for `team`.
    public func pendingImportCount(team: String) async throws -> Int {
        try await engine.read { connection in
            try connection.queryOne(
                "SELECT COUNT(*) FROM team_transfers WHERE target_team = ? AND transfer_sub IS NOT NULL AND imported_at IS NULL",
                [.text(team)])?.int(0) ?? 0
        }
    }

    /// Moves the user of `transferSub` to the `sub` Apple gave this team, in one transaction
    /// with `user.updated`: their Apple tokens (the previous team's) go, their sessions and id
    /// stay; a relay address from Apple replaces the previous team's.
    public func completeImport(userID: String, transferSub: String, newSub: String, relayEmail: String?, now: Int64) async throws -> ImportMove {
        let outbox = self.outbox
        return try await engine.write { connection -> ImportMove in
            guard var row = try TransferRow.load(userID: userID, in: connection), row.transferSub == transferSub, row.importedAt == nil,
                  let before = try UserStore.user(id: userID, in: connection)
            else { return .notPending }
            if before.appleSub != newSub {
                if let holder = try UserStore.user(appleSub: newSub, in: connection) {
                    row.attempts += 1
                    row.lastError = "sub_taken"
                    row.updatedAt = now
                    try row.save(in: connection)
                    return .subTaken(byUserID: holder.id)
                }
                try Self.move(before, to: newSub, relayEmail: relayEmail, now: now, in: connection)
            }
            row.importedAt = now
            row.lastError = nil
            row.updatedAt = now
            try row.save(in: connection)
            try AuditTrail.record(.transferImported, userID: userID, context: .system, now: now, in: connection)
            guard before.appleSub != newSub else { return .alreadyMoved }
            let after = try UserStore.user(id: userID, in: connection)
            try outbox.appendIfChanged(from: before, to: after, now: now, in: connection)
            return after.map(ImportMove.moved) ?? .notPending
        }
    }

    /// Apple refused the exchange (or something else failed): recorded, tried again next run.
    public func recordImportFailure(userID: String, error: String, now: Int64) async throws {
        try await engine.write { connection in
            guard var row = try TransferRow.load(userID: userID, in: connection) else { return }
            row.attempts += 1
            row.lastError = String(error.prefix(200))
            row.updatedAt = now
            try row.save(in: connection)
        }
    }

    // MARK: - Both

    /// Before any import the step is exporting: users with an Apple ID not yet exported (nor
    /// failed) are pending. Once an import has started, pending are the recorded users not yet
    /// imported (nor failed): after the window, pending and failed users are the ones left
    /// behind. Users without an Apple ID are never pending.
    public func status() async throws -> TransferStatus {
        try await engine.read { connection in
            let counted = try connection.queryOne("SELECT COUNT(*) AS users, COUNT(apple_sub) AS apple FROM users")
            let users = try counted?.int("users") ?? 0
            let withAppleID = try counted?.int("apple") ?? 0
            let counts = try connection.queryOne(
                """
                SELECT COUNT(exported_at) AS exported, COUNT(imported_at) AS imported, COUNT(last_error) AS failed,
                    COUNT(CASE WHEN exported_at IS NOT NULL AND imported_at IS NULL THEN 1 END) AS exported_not_imported,
                    COUNT(CASE WHEN transfer_sub IS NOT NULL AND imported_at IS NULL AND last_error IS NULL THEN 1 END) AS awaiting
                FROM team_transfers
                """)
            let failed = try counts?.int("failed") ?? 0
            let windowStartedAt = try ServerState.get(Self.windowKey, in: connection).flatMap { Int64(String(decoding: $0, as: UTF8.self)) }
            let pending = try windowStartedAt == nil
                ? max(0, withAppleID - (counts?.int("exported_not_imported") ?? 0) - failed)
                : counts?.int("awaiting") ?? 0
            return TransferStatus(
                users: users, exported: try counts?.int("exported") ?? 0, imported: try counts?.int("imported") ?? 0, pending: pending,
                failed: failed, windowStartedAt: windowStartedAt, withoutAppleID: users - withAppleID)
        }
    }

    // MARK: - Inside other transactions

    /// A sign-in during the window whose `sub` is new here but whose `transfer_sub` was
    /// recorded: the user moves to the new `sub` (and is imported) inside the sign-in's
    /// transaction. Returns the user as it was before the move, nil when no user waits for
    /// `transferSub`.
    static func moveOnSignIn(transferSub: String, to newSub: String, now: Int64, in connection: any SQLConnection) throws -> UserRecord? {
        guard let id = try connection.queryOne(
            "SELECT user_id FROM team_transfers WHERE transfer_sub = ? AND imported_at IS NULL", [.text(transferSub)])?.string(0),
            var row = try TransferRow.load(userID: id, in: connection),
            let before = try UserStore.user(id: id, in: connection)
        else { return nil }
        try move(before, to: newSub, relayEmail: nil, now: now, in: connection)
        row.importedAt = now
        row.lastError = nil
        row.updatedAt = now
        try row.save(in: connection)
        return before
    }

    /// The user takes the new team's `sub`; Apple's tokens, issued to the previous team, go.
    private static func move(_ user: UserRecord, to newSub: String, relayEmail: String?, now: Int64, in connection: any SQLConnection) throws {
        try connection.run("UPDATE users SET apple_sub = ?, updated_at = ? WHERE id = ?", [.text(newSub), .integer(now), .text(user.id)])
        if let relayEmail {
            // From Apple, so verified; a relay address that was disabled stays disabled.
            try connection.run(
                """
                UPDATE users SET email = ?, email_verified = 1, is_private_email = 1,
                    email_forwarding = COALESCE(email_forwarding, 'enabled')
                WHERE id = ?
                """,
                [.text(relayEmail), .text(user.id)])
        }
        try AppleTokenVault.drop(userID: user.id, in: connection)
    }

    private static func holder(of transferSub: String, other userID: String, in connection: any SQLConnection) throws -> String? {
        try connection.queryOne(
            "SELECT user_id FROM team_transfers WHERE transfer_sub = ? AND user_id <> ?", [.text(transferSub), .text(userID)])?.string(0)
    }
}
