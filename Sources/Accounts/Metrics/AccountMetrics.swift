/// The metrics of the accounts' work (docs/guides/operating.md): calls to Apple, notifications,
/// sign-ins, re-validations, revocations, webhooks and mail. The application's `Metrics` adds
/// the HTTP and process figures and renders them all at `/metrics`. Labels come from fixed
/// vocabularies only: never a token, code, secret or key.
package final class AccountMetrics: Sendable {
    package let apple = AppleMetrics()
    package let notifications = NotificationMetrics()
    package let signIns = LabeledCounter(name: "siwa_sign_ins_total", help: "Sign-ins by outcome.", label: "outcome")
    package let refreshValidations = LabeledCounter(
        name: "siwa_refresh_validations_total", help: "Re-validations of stored refresh tokens with Apple, by outcome.", label: "outcome")
    package let revocations = RevocationMetrics()
    package let webhooks = WebhookMetrics()
    package let mail = MailMetrics()
    /// docs/guides/passwords-and-email.md: mail not sent, by why (`rate`: the address's hourly limit; `relay_disabled`).
    package let emailSuppressed = LabeledCounter(name: "siwa_email_suppressed_total", help: "Email not sent, by reason (rate: a code past its address's hourly limit; relay_disabled: Apple's relay does not forward to the user).", label: "reason")
    /// Reset requests' work, run after the answer (`EmailRequestQueue`): `done`, `failed`, `dropped`.
    package let emailRequests = LabeledCounter(
        name: "siwa_email_requests_total", help: "Reset requests' work after the answer, by outcome.", label: "outcome")

    package init() {}

    /// In the order `/metrics` has always listed them.
    package func render(into output: inout String) {
        apple.render(into: &output)
        notifications.render(into: &output)
        signIns.render(into: &output)
        refreshValidations.render(into: &output)
        revocations.render(into: &output)
        webhooks.render(into: &output)
        mail.render(into: &output)
        emailSuppressed.render(into: &output)
        emailRequests.render(into: &output)
    }
}
