import Accounts
import JSON
import Store

/// `siwa-server events` (docs/reference/command-line.md): the audit trail, newest first, as
/// `GET /admin/events` lists it.
extension UserAdministration {
    /// When `--since` starts: a duration back from `now` (`1h`, `7d`) or an RFC 3339 time; nil
    /// for anything else.
    public static func since(_ text: String, now: Int64) -> Int64? {
        if let time = RFC3339.parse(text) { return time }
        guard let seconds = try? DurationParser.seconds(text), seconds > 0 else { return nil }
        return now - seconds
    }

    /// Why `--since` or `--limit` cannot be used, or nil.
    public static func problem(eventLimit limit: Int, since: String?) -> String? {
        if !(1...200).contains(limit) { return "--limit must be from 1 to 200" }
        if let since, Self.since(since, now: 0) == nil {
            return "--since must be a duration (30m, 12h, 7d) or an RFC 3339 time (2026-11-22T10:00:00Z)"
        }
        return nil
    }

    /// The newest `limit` events matching the filters: one line each for people, or the API's
    /// page with `json`.
    public func events(userID: String?, typePrefix: String?, since: String?, limit: Int) async throws -> Outcome {
        let filter = AuditFilter(userID: userID, typePrefix: typePrefix, since: since.flatMap { Self.since($0, now: clock()) })
        let page = try await store.audit.page(filter, after: nil, limit: limit)
        if json { return .done(JSONWriter.string(EventJSON.page(page.events, next: page.next))) }
        guard !page.events.isEmpty else { return .done("no events") }
        let lines = page.events.map { event in
            [RFC3339.format(event.at), event.type, event.userID ?? "-", event.actor, event.ip ?? "-",
             event.detail.isEmpty ? "" : JSONWriter.string(.object(event.detail))]
                .map { Self.printable($0) }.joined(separator: "  ")
        }
        return .done(lines.joined(separator: "\n"))
    }
}
