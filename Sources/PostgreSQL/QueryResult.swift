import CLibPQ

/// A successful `PGresult`, cleared when dropped.
final class QueryResult {
    let handle: OpaquePointer

    init(_ handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    /// Rows inserted, updated, deleted (or selected) by the command; 0 for others.
    var affectedRowCount: Int {
        PQcmdTuples(handle).flatMap { Int(String(cString: $0)) } ?? 0
    }

    /// Rows the result holds.
    var rowCount: Int { Int(PQntuples(handle)) }

    /// The command tag: "INSERT 0 1", "COMMIT", or "ROLLBACK" for a COMMIT the server refused.
    var commandTag: String {
        PQcmdStatus(handle).map { String(cString: $0) } ?? ""
    }

    /// Every row, decoded into one flat buffer that the rows slice. `columns` is reused when
    /// it still fits (a prepared statement's names do not change), else made anew.
    func rows(reusing columns: SQLColumns?) -> (rows: [PostgresRow], columns: SQLColumns) {
        let width = Int(PQnfields(handle))
        let columns = columns.flatMap { $0.names.count == width ? $0 : nil } ?? makeColumns(width)
        let rowCount = Int(PQntuples(handle))
        guard rowCount > 0 else { return ([], columns) }
        let types = (0..<Int32(width)).map { PQftype(handle, $0) }
        var values: [PostgresValue] = []
        values.reserveCapacity(rowCount * width)
        for row in 0..<Int32(rowCount) {
            for column in 0..<Int32(width) {
                if PQgetisnull(handle, row, column) != 0 {
                    values.append(.null)
                    continue
                }
                let length = Int(PQgetlength(handle, row, column))
                let text = PQgetvalue(handle, row, column).map { UnsafeRawPointer($0).assumingMemoryBound(to: UInt8.self) }
                values.append(PostgresValue(text: UnsafeBufferPointer(start: text, count: length), type: types[Int(column)]))
            }
        }
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for row in 0..<rowCount {
            rows.append(PostgresRow(columns: columns, values: values[row * width ..< (row + 1) * width]))
        }
        return (rows, columns)
    }

    private func makeColumns(_ width: Int) -> SQLColumns {
        SQLColumns(names: (0..<Int32(width)).map { column in
            PQfname(handle, column).map { String(cString: $0) } ?? ""
        })
    }
}
