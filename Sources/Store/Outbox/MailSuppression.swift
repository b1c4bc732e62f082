/// Why a message was not written (the `reason` label of `siwa_email_suppressed_total`; codes
/// past their address's hourly limit are counted as `rate` where they are asked for).
public enum MailSuppression: String, Sendable {
    /// To an Apple relay address while the user's `email_forwarding` is not `enabled`.
    case relayDisabled = "relay_disabled"
}
