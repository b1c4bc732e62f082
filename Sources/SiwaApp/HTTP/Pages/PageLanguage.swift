import HTTPServer
import MailTemplates

/// The language a page is written in (docs/guides/passwords-and-email.md "Language"): the request's `?lang=en|ko`, else
/// the first of the two its `Accept-Language` names, else English. A `lang` of another value is
/// ignored.
struct PageLanguage: Sendable, Equatable {
    let language: Language
    /// Chosen by `?lang=`: then the page's links, forms and redirects pass it on, since the
    /// browser's `Accept-Language` may name the other language.
    let chosen: Bool

    static let english = PageLanguage(.en)

    init(_ language: Language, chosen: Bool = false) {
        self.language = language
        self.chosen = chosen
    }

    init(_ request: HTTPRequest) {
        if let value = (try? FormFields(parsing: request.query ?? ""))?["lang"], let language = Language(rawValue: value) {
            self.init(language, chosen: true)
            return
        }
        // Several Accept-Language lines make one list (RFC 9110 §5.3).
        let header = request.headers.values("Accept-Language")
        self.init(Language.negotiate(acceptLanguage: header.isEmpty ? nil : header.joined(separator: ",")))
    }

    /// A path of this site with `lang=` added when the language was chosen.
    func carried(_ location: String) -> String {
        guard chosen else { return location }
        return location + (location.contains("?") ? "&" : "?") + "lang=" + language.rawValue
    }

    func text(_ key: PageText, _ values: [String: String] = [:]) -> String {
        PageWords.text(key, language, values)
    }

    func html(_ key: PageText, _ values: [String: String] = [:], markup: [String: String] = [:]) -> String {
        PageWords.html(key, language, values, markup: markup)
    }

    /// The page at `request`'s path and query (`lang` left out), for the language switch's links.
    static func here(_ request: HTTPRequest) -> String {
        let fields = (try? FormFields(parsing: request.query ?? ""))?.fields.filter { $0.name != "lang" } ?? []
        return fields.isEmpty ? request.path : request.path + "?" + FormFields(fields: fields).encoded()
    }
}
