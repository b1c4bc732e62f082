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

extension MigrationError {
    /// Refuses a database whose recorded versions (version to name) this build's `known`
    /// migrations (sorted by version) do not account for: shared by both drivers' migrators.
    public static func check(_ recorded: [Int: String], against known: [Migration]) throws {
        let newestKnown = known.last?.version ?? 0
        if let newestRecorded = recorded.keys.max(), newestRecorded > newestKnown {
            throw MigrationError.newerThanBuild(recorded: newestRecorded, known: newestKnown)
        }
        let names = Dictionary(uniqueKeysWithValues: known.map { ($0.version, $0.name) })
        for (version, name) in recorded.sorted(by: { $0.key < $1.key }) {
            guard let expected = names[version] else { throw MigrationError.unknownVersion(version) }
            if expected != name {
                throw MigrationError.nameMismatch(version: version, recorded: name, expected: expected)
            }
        }
    }
}
