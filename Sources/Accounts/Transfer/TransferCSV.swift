import Store

/// The file the sending team hands over (docs/guides/team-transfer.md): `user_id,external_id,transfer_sub`, one
/// user a line, RFC 4180 quoting. It never holds a `sub` or an email: a `transfer_sub` is of
/// use only to the team it was made for, and only for 60 days.
///
/// Spreadsheet-safe (docs/guides/team-transfer.md): a cell starting with `=`, `+`, `-`, `@`, a tab or a CR would run
/// as a formula when an operator opens the file, so it is written with a leading `'` (a cell
/// made of quotes and then one of those, too, so that the reading is never ambiguous).
/// `parse` strips exactly that one added quote: what is written reads back as it was.
public enum TransferCSV {
    public static let header = "user_id,external_id,transfer_sub"

    /// Why a file cannot be imported; nothing was changed.
    public struct Malformed: Error, Equatable, CustomStringConvertible {
        public let line: Int
        public let reason: String
        public var description: String { "line \(line): \(reason)" }

        package init(line: Int, reason: String) {
            self.line = line
            self.reason = reason
        }
    }

    public static func render(_ records: [TransferRecord]) -> String {
        var text = header + "\n"
        for record in records {
            text += [record.userID, record.externalID ?? "", record.transferSub].map { field(defused($0)) }.joined(separator: ",") + "\n"
        }
        return text
    }

    /// The characters a spreadsheet starts a formula with (OWASP's "CSV injection" list).
    package static func startsFormula(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "=" || scalar == "+" || scalar == "-" || scalar == "@" || scalar == "\t" || scalar == "\r"
    }

    /// Whether `text` is quotes and then a formula character, or starts with one directly:
    /// written with one more quote in front, and read back with that one quote less.
    package static func needsQuoteMark(_ text: Substring.UnicodeScalarView) -> Bool {
        guard let first = text.first(where: { $0 != "'" }) else { return false }
        return startsFormula(first)
    }

    /// `text` with a leading `'` when a spreadsheet would take it for a formula.
    package static func defused(_ text: String) -> String {
        needsQuoteMark(Substring(text).unicodeScalars) ? "'" + text : text
    }

    /// A field as written, less the `'` that `defused` added.
    package static func restored(_ field: String) -> String {
        let scalars = Substring(field).unicodeScalars
        guard scalars.first == "'", needsQuoteMark(scalars.dropFirst()) else { return field }
        return String(field.unicodeScalars.dropFirst())
    }

    /// A field quoted when it must be (RFC 4180 §2.6, 2.7). An external id is the team's own
    /// text and may hold anything; ids and `transfer_sub`s never need it.
    package static func field(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        var quoted = "\""
        for character in text {
            if character == "\"" { quoted += "\"" }
            quoted.append(character)
        }
        return quoted + "\""
    }

    /// The records of a whole file, or the first thing wrong with it: a header other than
    /// ours, a line without three fields, an empty `user_id` or `transfer_sub`, a user or
    /// `transfer_sub` twice.
    public static func parse(_ bytes: [UInt8]) throws(Malformed) -> [TransferRecord] {
        guard let text = String(validating: bytes, as: UTF8.self) else { throw Malformed(line: 1, reason: "the file is not UTF-8 text") }
        let rows = try split(text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text)
        guard let first = rows.first else { throw Malformed(line: 1, reason: "the file is empty; expected the header \(header)") }
        guard first.fields == ["user_id", "external_id", "transfer_sub"] else {
            throw Malformed(line: first.line, reason: "the header must be \(header)")
        }
        var records: [TransferRecord] = []
        var users: Set<String> = []
        var transferSubs: Set<String> = []
        for row in rows.dropFirst() {
            guard row.fields.count == 3 else { throw Malformed(line: row.line, reason: "expected 3 fields, found \(row.fields.count)") }
            let (userID, externalID, transferSub) = (restored(row.fields[0]), restored(row.fields[1]), restored(row.fields[2]))
            guard !userID.isEmpty else { throw Malformed(line: row.line, reason: "user_id is empty") }
            guard !transferSub.isEmpty else { throw Malformed(line: row.line, reason: "transfer_sub is empty") }
            guard users.insert(userID).inserted else { throw Malformed(line: row.line, reason: "user \(userID) appears twice") }
            guard transferSubs.insert(transferSub).inserted else { throw Malformed(line: row.line, reason: "a transfer_sub appears twice") }
            records.append(TransferRecord(userID: userID, externalID: externalID.isEmpty ? nil : externalID, transferSub: transferSub))
        }
        return records
    }

    /// Splits into rows of fields, each with the line it starts on; blank lines are skipped.
    /// Linear in the size of the file.
    private static func split(_ text: String) throws(Malformed) -> [(line: Int, fields: [String])] {
        var rows: [(line: Int, fields: [String])] = []
        var fields: [String] = []
        var field = ""
        var line = 1
        var rowLine = 1
        var quoted = false
        var wasQuoted = false
        var characters = text.unicodeScalars.makeIterator()
        var pending: Unicode.Scalar? = characters.next()
        func endRow() {
            if !(fields.isEmpty && field.isEmpty && !wasQuoted) { rows.append((rowLine, fields + [field])) }
            fields = []
            field = ""
            wasQuoted = false
        }
        while let scalar = pending {
            pending = characters.next()
            if quoted {
                if scalar == "\"" {
                    if pending == "\"" {
                        field.unicodeScalars.append("\"")
                        pending = characters.next()
                    } else {
                        quoted = false
                    }
                } else {
                    if scalar == "\n" { line += 1 }
                    field.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"":
                guard field.isEmpty, !wasQuoted else { throw Malformed(line: line, reason: "a quote inside an unquoted field") }
                quoted = true
                wasQuoted = true
            case ",":
                fields.append(field)
                field = ""
                wasQuoted = false
            case "\r" where pending == "\n":
                break
            case "\n", "\r":
                endRow()
                line += 1
                rowLine = line
            default:
                guard !wasQuoted else { throw Malformed(line: line, reason: "text after a closing quote") }
                field.unicodeScalars.append(scalar)
            }
        }
        guard !quoted else { throw Malformed(line: rowLine, reason: "a quoted field is not closed") }
        endRow()
        return rows
    }
}
