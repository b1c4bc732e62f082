/// The name and email Apple gives only with a person's first authorization, kept in the store
/// until the server has answered a sign-in of that Apple ID: if that first post fails, the next
/// sign-in (whose credential carries no name) sends them again.
public struct PendingProfile: Sendable, Hashable, Codable {
    /// The Apple user identifier (`sub`) they belong to; never sent with another's sign-in.
    public var appleUserID: String
    public var name: PersonName?
    public var email: String?

    public init(appleUserID: String, name: PersonName?, email: String?) {
        self.appleUserID = appleUserID
        self.name = name
        self.email = email
    }
}
