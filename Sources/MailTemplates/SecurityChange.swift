/// What a `security_notice` tells a person changed on their account.
public enum SecurityChange: String, Sendable, CaseIterable {
    case passwordSet = "password_set"
    case passwordChanged = "password_changed"
    case passwordReset = "password_reset"
    case passwordRemoved = "password_removed"
    case appleLinked = "apple_linked"
    case appleUnlinked = "apple_unlinked"
}
