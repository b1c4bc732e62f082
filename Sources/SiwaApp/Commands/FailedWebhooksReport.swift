import Store

/// What `siwa-server webhooks failed` prints: one line per failed event (id, type, user id,
/// attempts, created, the last error), in columns, or one line saying there are none.
public enum FailedWebhooksReport {
    public static func text(_ events: [FailedWebhookEvent]) -> String {
        guard !events.isEmpty else { return "no failed webhook events" }
        let header = ["ID", "TYPE", "USER", "ATTEMPTS", "CREATED", "LAST ERROR"]
        let rows = events.map { event in
            [event.id, event.type, event.userID, String(event.attempts), RFC3339.format(event.createdAt), printable(event.lastError ?? "-")]
        }
        // Every column but the last padded to its widest cell.
        let widths = (0..<header.count - 1).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        let lines = ([header] + rows).map { cells in
            cells.enumerated().map { index, cell in
                index < widths.count ? cell + String(repeating: " ", count: widths[index] - cell.count) : cell
            }.joined(separator: "  ")
        }
        return (lines + ["\(events.count) failed event(s); `siwa-server webhooks retry ID` or `--all` queues them again"]).joined(separator: "\n")
    }

    /// An error as stored may hold a peer's words (a TLS or socket reason): no control
    /// characters reach the terminal.
    private static func printable(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}
