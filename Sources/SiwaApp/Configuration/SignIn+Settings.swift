import Accounts

extension SignIn.Settings {
    /// What a sign-in reads of the configuration.
    init(_ configuration: Configuration) {
        self.init(
            clientIDs: configuration.clientIDs, requireNonce: configuration.requireNonce, webClientID: configuration.webClientID,
            redirectURI: configuration.redirectURI, sessionTTL: Int64(configuration.sessionTTL.components.seconds))
    }
}
