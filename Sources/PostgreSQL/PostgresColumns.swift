/// The column names of a result, shared by all its rows.
final class PostgresColumns: Sendable {
    let names: [String]
    private let indexes: [String: Int]

    init(names: [String]) {
        self.names = names
        var indexes: [String: Int] = [:]
        // The first of duplicate names wins, as in the SQLite layer.
        for (index, name) in names.enumerated().reversed() {
            indexes[name] = index
        }
        self.indexes = indexes
    }

    func index(of name: String) -> Int? {
        indexes[name]
    }
}
