/// The column names of a prepared statement, shared by all rows it produces.
final class RowColumns: Sendable {
    let names: [String]
    private let indexes: [String: Int]

    init(names: [String]) {
        self.names = names
        var indexes: [String: Int] = [:]
        // The first of duplicate names wins, like sqlite3_column_name lookups in other layers.
        for (index, name) in names.enumerated().reversed() {
            indexes[name] = index
        }
        self.indexes = indexes
    }

    func index(of name: String) -> Int? {
        indexes[name]
    }
}
