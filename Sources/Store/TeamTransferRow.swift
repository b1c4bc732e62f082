import SQLRow

/// One `team_transfers` row.
struct TransferRow {
    var userID: String
    var targetTeam: String
    var transferSub: String?
    var exportedAt: Int64?
    var importedAt: Int64?
    var attempts: Int64
    var lastError: String?
    var updatedAt: Int64

    static func load(userID: String, in connection: any SQLConnection) throws -> TransferRow? {
        guard let row = try connection.queryOne(
            """
            SELECT target_team, transfer_sub, exported_at, imported_at, attempts, last_error, updated_at
            FROM team_transfers WHERE user_id = ?
            """,
            [.text(userID)])
        else { return nil }
        return TransferRow(
            userID: userID, targetTeam: try row.string("target_team"), transferSub: try row.optionalString("transfer_sub"),
            exportedAt: try row.optionalInt64("exported_at"), importedAt: try row.optionalInt64("imported_at"),
            attempts: try row.int64("attempts"), lastError: try row.optionalString("last_error"), updatedAt: try row.int64("updated_at"))
    }

    func save(in connection: any SQLConnection) throws {
        try connection.run(
            """
            INSERT INTO team_transfers(user_id, target_team, transfer_sub, exported_at, imported_at, attempts, last_error, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(user_id) DO UPDATE SET
                target_team = excluded.target_team, transfer_sub = excluded.transfer_sub, exported_at = excluded.exported_at,
                imported_at = excluded.imported_at, attempts = excluded.attempts, last_error = excluded.last_error,
                updated_at = excluded.updated_at
            """,
            [
                .text(userID), .text(targetTeam), transferSub.map(SQLValue.text) ?? .null, exportedAt.map(SQLValue.integer) ?? .null,
                importedAt.map(SQLValue.integer) ?? .null, .integer(attempts), lastError.map(SQLValue.text) ?? .null, .integer(updatedAt),
            ])
    }
}
