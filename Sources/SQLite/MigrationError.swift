/// Why the migrator refused a database or a list of migrations.
public enum MigrationError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The database was migrated by a newer build; running an older one could corrupt its data.
    case newerThanBuild(recorded: Int, known: Int)
    /// The same version means different changes in this build and in the database.
    case nameMismatch(version: Int, recorded: String, expected: String)
    /// The database records a version this build never had (below its newest).
    case unknownVersion(Int)
    /// The build's own list is wrong (duplicate or non-positive versions).
    case invalidMigrations(String)

    public var description: String {
        switch self {
        case .newerThanBuild(let recorded, let known):
            "database schema version \(recorded) is newer than this build (\(known))"
        case .nameMismatch(let version, let recorded, let expected):
            "database schema version \(version) was applied as '\(recorded)' but this build calls it '\(expected)'"
        case .unknownVersion(let version):
            "database schema version \(version) is unknown to this build"
        case .invalidMigrations(let reason):
            "invalid migrations: \(reason)"
        }
    }
}
