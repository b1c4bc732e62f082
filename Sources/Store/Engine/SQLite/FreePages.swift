import SQLite

/// Gives the disk back after deletions. SQLite keeps the pages of deleted rows as free pages
/// and never shrinks the file by itself, so a burst of short-lived rows (login states, nonces,
/// from clients that are not signed in) would leave the file at its peak size for ever. In
/// incremental auto-vacuum mode, housekeeping returns free pages to the file system a bounded
/// number at a time.
public enum FreePages {
    /// `PRAGMA auto_vacuum` value of incremental mode.
    static let incremental = 2

    /// Puts the database in incremental auto-vacuum mode. A new database takes it at once; an
    /// existing one (made before this mode) is rebuilt once by VACUUM.
    public static func enableReclaiming(_ database: Database) throws {
        try database.writeWithoutTransaction { connection in
            guard try connection.queryOne("PRAGMA auto_vacuum")?.int(0) != incremental else { return }
            try connection.execute("PRAGMA auto_vacuum=INCREMENTAL")
            if try connection.queryOne("PRAGMA auto_vacuum")?.int(0) != incremental {
                try connection.execute("VACUUM")
            }
        }
    }

    /// Returns up to `maxPages` free pages to the file system; returns how many were free before.
    @discardableResult
    public static func reclaim(_ database: Database, maxPages: Int = 4096) async throws -> Int {
        try await database.write { connection in
            let free = try connection.queryOne("PRAGMA freelist_count")?.int(0) ?? 0
            if free > 0 { try connection.execute("PRAGMA incremental_vacuum(\(max(1, maxPages)))") }
            return free
        }
    }
}
