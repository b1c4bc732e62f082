/// The user name and password for `AUTH`, from `smtp_url`'s user info. Shown anywhere (string
/// interpolation, `dump`, a debugger's summary) it is the user name and a mask.
public struct SMTPCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public let user: String
    public let password: String

    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    public var description: String { "\(user):***" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "password": "***"]) }
}
