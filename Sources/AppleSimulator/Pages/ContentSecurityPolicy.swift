import JOSE
import OpenSSLCrypto
import WireFormat

/// The `Content-Security-Policy` of the simulator's pages. They are the stage for reflected
/// input (the consent page echoes what was posted to it), so even an escaping bug must not run
/// a script: nothing loads from anywhere, the one inline style is allowed by its hash, and the
/// one script (the form_post page's auto-submit, as Apple's page does) by its own hash.
enum ContentSecurityPolicy {
    /// The form_post page's auto-submit, the only script any page carries.
    static let autoSubmitScript = #"document.getElementById("apple-form-post").submit();"#

    /// The consent and error pages. Their forms post to the simulator itself, which may then
    /// redirect to the `redirect_uri` (query and fragment modes); browsers apply `form-action`
    /// to that redirect too, so its origin is allowed when it is given.
    static func page(redirectURI: String? = nil) -> String {
        let target = redirectURI.flatMap(origin(of:)).map { " " + $0 } ?? ""
        return "default-src 'none'; style-src '\(styleHash)'; script-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'\(target)"
    }

    /// The form_post page: its script, no `form-action` (its one form is ours, and the POST's
    /// own redirect goes wherever the app sends people back, which browsers would check too).
    static let formPost =
        "default-src 'none'; style-src '\(styleHash)'; script-src '\(hash(autoSubmitScript))'; frame-ancestors 'none'; base-uri 'none'"

    static let styleHash = hash(HTML.style)

    /// CSP's hash source: `sha256-` and the standard, padded base64 of the digest.
    static func hash(_ text: String) -> String {
        "sha256-" + Base64.standard.encode(SHA256.hash(text))
    }

    /// `scheme://host[:port]` of an acceptable redirect URI, or nil when it holds anything that
    /// could end a CSP source (it goes into a header).
    static func origin(of uri: String) -> String? {
        guard let schemeEnd = uri.firstRange(of: "://") else { return nil }
        let afterScheme = uri[schemeEnd.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let origin = uri[..<schemeEnd.upperBound].lowercased() + authority.lowercased()
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789.-:[]/")
        guard !authority.isEmpty, origin.allSatisfy(allowed.contains) else { return nil }
        return origin
    }
}
