/// A page of the user's activity, newest first; `nextCursor` asks for the next one.
public struct ActivityPage: Sendable, Hashable, Codable {
    public var events: [ActivityEvent]
    public var nextCursor: String?
}
