/// What the simulator, as Apple's Private Email Relay and everyone's mailbox, does with one
/// `RCPT TO` address (APPLE.md §10b).
enum RelayRoute: Sendable, Equatable {
    /// Not a relay address: the mailbox keeps the message for this address as it is.
    case deliver(String)
    /// A relay address whose forwarding is allowed: the message goes to the person's own address.
    case forward(String)
    /// Refused at `RCPT TO` with a 550; the text says why (enhanced status code first).
    case refuse(String)
}
