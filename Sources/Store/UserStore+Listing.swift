import SQLRow

/// Which users a listing asks for (docs/guides/connecting-your-backend.md `GET /admin/users`, `siwa-server users list`): every
/// field given must equal the stored value exactly; none given lists every user.
public struct UserFilter: Sendable, Equatable {
    public var email: String?
    public var appleSub: String?
    public var externalID: String?

    public init(email: String? = nil, appleSub: String? = nil, externalID: String? = nil) {
        self.email = email
        self.appleSub = appleSub
        self.externalID = externalID
    }
}

extension UserStore {
    /// The most users one page may hold.
    public static let maximumPage = 200

    /// Up to `limit` users matching `filter`, in id order, starting after the user `afterID`.
    /// Keyset pagination rather than OFFSET: a page costs one index range read however deep it
    /// is, and users created or deleted between pages never shift one (nothing is skipped or
    /// seen twice).
    public func list(matching filter: UserFilter, after afterID: String?, limit: Int) async throws -> [UserRecord] {
        precondition((1...Self.maximumPage + 1).contains(limit), "a page holds 1 to \(Self.maximumPage) users, and one more to look ahead")
        let (sql, parameters) = Self.listing(matching: filter, after: afterID, limit: limit)
        return try await engine.read { connection in try connection.query(sql, parameters).map(UserRecord.init) }
    }

    /// The page's query: each filter is an index (email with id, apple_sub, external_id).
    static func listing(matching filter: UserFilter, after afterID: String?, limit: Int) -> (String, [SQLValue]) {
        var conditions: [String] = []
        var parameters: [SQLValue] = []
        for (column, value) in [("email", filter.email), ("apple_sub", filter.appleSub), ("external_id", filter.externalID)] {
            guard let value else { continue }
            conditions.append("u.\(column) = ?")
            parameters.append(.text(value))
        }
        if let afterID {
            conditions.append("u.id > ?")
            parameters.append(.text(afterID))
        }
        parameters.append(.integer(Int64(limit)))
        let sql = "SELECT \(UserRecord.columns) FROM users u"
            + (conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND "))
            + " ORDER BY u.id LIMIT ?"
        return (sql, parameters)
    }
}
