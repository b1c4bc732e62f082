import SMTP

extension Doctor {
    /// `smtp_url` and `email_from` checked for real (docs/guides/passwords-and-email.md): connect, TLS, AUTH, then `QUIT`
    /// with nothing sent. A failure names the setting to look at; the password is never shown
    /// (`SMTPError` holds none). The relay reminder goes on the line that passes, since nothing
    /// here can see Apple's list of registered domains.
    func smtpCheck(_ configuration: Configuration) async -> Check? {
        guard let url = configuration.smtpURL else { return nil }
        let name = "SMTP \(url.redacted)"
        let domain = configuration.emailFrom.map { $0.address.split(separator: "@").last.map(String.init) ?? "" } ?? "?"
        do {
            let client = try SMTPClient(configuration: SMTPConfiguration(url: url, extraCAFile: configuration.smtpCAFile))
            try await client.checkConnection()
        } catch {
            let setting: String = switch error.step {
            case .setup: "smtp_ca_file"
            case .tlsHandshake, .startTLS: configuration.smtpCAFile == nil ? "smtp_url (host) or smtp_ca_file" : "smtp_url (host) and smtp_ca_file"
            case .authentication: "smtp_url (user and password)"
            default: "smtp_url (host and port), and that the server is up"
            }
            return Check(name: name, ok: false, detail: "\(error) (check \(setting))")
        }
        return Check(
            name: name, ok: true,
            detail: "connected, TLS and login work (nothing sent); for mail to reach Apple's private relay addresses, "
                + "register \(domain) (email_from's domain) with Apple: Certificates, Identifiers & Profiles → Services → "
                + "Sign in with Apple for Email Communication")
    }
}
