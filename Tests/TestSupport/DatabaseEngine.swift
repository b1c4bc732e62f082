/// The Store's two engines, as test arguments: one test body runs on SQLite and on PostgreSQL.
public enum DatabaseEngine: String, CaseIterable, Sendable {
    case sqlite, postgres

    /// PostgreSQL only where its tests run (always under CI; skipped loudly elsewhere).
    public static var available: [DatabaseEngine] { PostgresCluster.testsEnabled ? allCases : [.sqlite] }
}
