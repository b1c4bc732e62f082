/// A queued message of a kind this build has no templates for (written by a newer one).
package struct UnknownMailKind: Error, CustomStringConvertible {
    package let kind: String
    package var description: String { "no templates for the mail kind \"\(kind)\"" }

    package init(kind: String) {
        self.kind = kind
    }
}
