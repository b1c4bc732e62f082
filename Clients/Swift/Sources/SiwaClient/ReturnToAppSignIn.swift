import Foundation

/// The return-to-app sign-in for apps that open a browser (RFC 7636 PKCE, S256): open `url`;
/// the server answers Apple's callback by sending the browser to `returnTo` with `code=…`, and
/// `SiwaClient.exchange(callbackURL:signIn:)` trades that code and `verifier` for a session.
public struct ReturnToAppSignIn: Sendable, Hashable {
    /// The page to open in the browser (or `ASWebAuthenticationSession`).
    public let url: URL
    /// Where the server sends the browser back: a URL of a scheme the server allows
    /// (`allowed_return_schemes`).
    public let returnTo: URL
    /// Kept by the app only, never in a URL.
    public let verifier: String

    /// The S256 challenge: base64url of the SHA-256 of the verifier.
    public var challenge: String { Self.challenge(for: verifier) }

    public init(baseURL: URL, returnTo: URL) {
        self.init(baseURL: baseURL, returnTo: returnTo, verifier: Base64URL.random(bytes: 32))
    }

    init(baseURL: URL, returnTo: URL, verifier: String) {
        self.returnTo = returnTo
        self.verifier = verifier
        var components = URLComponents(url: baseURL.appendingPathComponent("auth/apple/login"), resolvingAgainstBaseURL: false)!
        components.queryItems = [
            URLQueryItem(name: "return_to", value: returnTo.absoluteString),
            URLQueryItem(name: "code_challenge", value: Self.challenge(for: verifier)),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        // `+` in a query means a space to many servers; the challenge is base64url, so only the
        // return URL can hold one.
        components.percentEncodedQuery = components.percentEncodedQuery?.replacingOccurrences(of: "+", with: "%2B")
        url = components.url!
    }

    static func challenge(for verifier: String) -> String {
        Base64URL.encode(SHA256.hash(Array(verifier.utf8)))
    }

    /// The one-time code in the URL the browser came back with, when it is ours.
    public func code(in callbackURL: URL) -> String? {
        guard callbackURL.scheme?.lowercased() == returnTo.scheme?.lowercased() else { return nil }
        let items = URLComponents(url: callbackURL, resolvingAgainstBaseURL: false)?.queryItems ?? []
        return items.first { $0.name == "code" }?.value.flatMap { $0.isEmpty ? nil : $0 }
    }
}
