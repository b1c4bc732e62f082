import Store
import TestSupport

extension PostgresCluster {
    /// A new database holding the product's schema, copied from one migrated once per process.
    public func makeMigratedDatabase() async throws -> String {
        try await makeDatabase(template: "migrated") { _ = try Store.migrate(path: $0) }
    }
}
