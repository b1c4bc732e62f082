/// The column names of a result, shared by all its rows.
package final class SQLColumns: Sendable {
    package let names: [String]
    private let indexes: [String: Int]

    package init(names: [String]) {
        self.names = names
        var indexes: [String: Int] = [:]
        // The first of duplicate names wins, as `sqlite3_column_name` lookups do elsewhere.
        for (index, name) in names.enumerated().reversed() {
            indexes[name] = index
        }
        self.indexes = indexes
    }

    func index(of name: String) -> Int? {
        indexes[name]
    }
}
