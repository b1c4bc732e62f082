/// A queued message of a kind this build has no templates for (written by a newer one).
struct UnknownMailKind: Error, CustomStringConvertible {
    let kind: String
    var description: String { "no templates for the mail kind \"\(kind)\"" }
}
