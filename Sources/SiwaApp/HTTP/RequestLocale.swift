import HTTPServer
import MailTemplates

/// A new user's language (docs/guides/passwords-and-email.md): the first of `en`, `ko` the request's `Accept-Language`
/// names, else `en`.
enum RequestLocale {
    static func of(_ request: HTTPRequest) -> String {
        PageLanguage(request).language.rawValue
    }
}
