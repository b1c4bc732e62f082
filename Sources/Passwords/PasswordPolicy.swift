/// What docs/guides/passwords-and-email.md accepts as a new password: 10 to 256 bytes of UTF-8, not among the 10,000 most
/// common passwords, and not containing the email's local part. A refusal says which rule, in
/// words for people (400 `weak_password`); it never repeats the password.
public enum PasswordPolicy {
    public static let minimumBytes = 10
    public static let maximumBytes = 256

    /// Local parts shorter than this are not looked for: "a@example.com" would otherwise
    /// forbid every password with an "a" in it.
    static let shortestLocalPartChecked = 3

    /// Why `password` is refused for an account with `email`, or nil when it is acceptable.
    public static func weakness(of password: String, email: String) -> String? {
        let bytes = password.utf8.count
        if bytes < minimumBytes { return "the password must be at least \(minimumBytes) bytes long" }
        if bytes > maximumBytes { return "the password must be at most \(maximumBytes) bytes long" }
        if CommonPasswords.contains(password) { return "the password is one of the 10,000 most common passwords" }
        if let at = email.lastIndex(of: "@") {
            let localPart = email[..<at].lowercased()
            if localPart.count >= shortestLocalPartChecked, password.lowercased().contains(localPart) {
                return "the password must not contain the email address's name"
            }
        }
        return nil
    }
}
