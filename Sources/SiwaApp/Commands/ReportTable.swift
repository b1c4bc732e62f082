/// The columns `webhooks failed` and `email failed` print: every column but the last padded to
/// its widest cell, then a closing line. Cells have their control characters made spaces: an
/// error as stored may hold a peer's words (a TLS or socket reason, an SMTP reply).
enum ReportTable {
    static func text(header: [String], rows: [[String]], closing: String) -> String {
        let rows = rows.map { $0.map(printable) }
        let widths = (0..<header.count - 1).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        let lines = ([header] + rows).map { cells in
            cells.enumerated().map { index, cell in
                index < widths.count ? cell + String(repeating: " ", count: widths[index] - cell.count) : cell
            }.joined(separator: "  ")
        }
        return (lines + [closing]).joined(separator: "\n")
    }

    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}
