import CLibPQ

/// Parameter values laid out for `PQexecPrepared`: one byte buffer holding every value, and
/// the type, format and length arrays libpq reads beside it.
///
/// Integers, reals, booleans and blobs go in binary with their type, so they arrive bit for bit
/// (a `bytea` never passes through an escaping step). Text goes in text format with no type
/// (`Oid` 0), so the server reads it as whatever type its place needs. NULL has no type either.
struct PostgresParameters {
    private(set) var types: [Oid] = []
    private var formats: [Int32] = []
    private var lengths: [Int32] = []
    /// Where each value starts in `bytes`; nil for SQL NULL.
    private var offsets: [Int?] = []
    private var bytes: [UInt8] = []

    var count: Int { types.count }

    init(_ values: [PostgresValue], sql: String) throws(PostgresError) {
        // The protocol counts parameters in 16 bits.
        guard values.count <= Int(UInt16.max) else {
            throw PostgresError(code: "54023", message: "\(values.count) parameters is more than PostgreSQL accepts", sql: sql)
        }
        types.reserveCapacity(values.count)
        formats.reserveCapacity(values.count)
        lengths.reserveCapacity(values.count)
        offsets.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            try append(value, position: index + 1, sql: sql)
        }
        // A non-empty buffer, so an empty blob or string still gets an address: a NULL pointer
        // would mean SQL NULL.
        bytes.append(0)
    }

    private mutating func append(_ value: PostgresValue, position: Int, sql: String) throws(PostgresError) {
        let start = bytes.count
        switch value {
        case .null:
            add(type: 0, format: 0, offset: nil, length: 0)
        case .integer(let number):
            withUnsafeBytes(of: number.bigEndian) { bytes.append(contentsOf: $0) }
            add(type: PostgresType.int8, format: 1, offset: start, length: 8)
        case .real(let number):
            withUnsafeBytes(of: number.bitPattern.bigEndian) { bytes.append(contentsOf: $0) }
            add(type: PostgresType.float8, format: 1, offset: start, length: 8)
        case .boolean(let flag):
            bytes.append(flag ? 1 : 0)
            add(type: PostgresType.bool, format: 1, offset: start, length: 1)
        case .blob(let blob):
            guard let length = Int32(exactly: blob.count) else { throw tooLarge(blob.count, position, sql) }
            bytes.append(contentsOf: blob)
            add(type: PostgresType.bytea, format: 1, offset: start, length: length)
        case .text(let text):
            // Text-format values are NUL-terminated C strings, and PostgreSQL's text types
            // cannot hold NUL anyway: refuse it rather than cut the value short.
            let utf8 = text.utf8
            guard !utf8.contains(0) else {
                throw PostgresError(code: "22021", message: "parameter $\(position) contains a NUL character", sql: sql)
            }
            guard let length = Int32(exactly: utf8.count) else { throw tooLarge(utf8.count, position, sql) }
            bytes.append(contentsOf: utf8)
            bytes.append(0)
            add(type: 0, format: 0, offset: start, length: length)
        }
    }

    private mutating func add(type: Oid, format: Int32, offset: Int?, length: Int32) {
        types.append(type)
        formats.append(format)
        lengths.append(length)
        offsets.append(offset)
    }

    private func tooLarge(_ count: Int, _ position: Int, _ sql: String) -> PostgresError {
        PostgresError(code: "54000", message: "parameter $\(position) of \(count) bytes is too large", sql: sql)
    }

    /// Calls `body` with the arrays `PQexecPrepared` takes, valid only inside it.
    func withArrays<R>(
        _ body: (
            _ values: UnsafePointer<UnsafePointer<CChar>?>?, _ lengths: UnsafePointer<Int32>?, _ formats: UnsafePointer<Int32>?
        ) throws -> R
    ) rethrows -> R {
        try bytes.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)
            let values = offsets.map { offset in
                offset.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return try values.withUnsafeBufferPointer { values in
                try lengths.withUnsafeBufferPointer { lengths in
                    try formats.withUnsafeBufferPointer { formats in
                        try body(values.baseAddress, lengths.baseAddress, formats.baseAddress)
                    }
                }
            }
        }
    }
}
