/// A refusal on a page people see in a browser, answered as an HTML page in the request's
/// language (its words are keys of the pages' strings files).
struct PageError: Error, Sendable {
    let status: Int
    let title: PageText
    let message: PageText

    static let foreignOrigin = PageError(status: 403, title: .errorRefused, message: .errorForeignOrigin)
    static let formExpired = PageError(status: 403, title: .errorRefused, message: .errorFormExpired)
    static let deletionNotConfirmed = PageError(status: 400, title: .errorNotDeleted, message: .errorDeletionNotConfirmed)
    static let webSignInNotConfigured = PageError(status: 500, title: .errorNotSetUp, message: .errorNoWebClientID)
    /// A form's body (or a link's query) is not form data, or holds a U+0000 (docs/reference/http-api.md).
    static let unreadableForm = PageError(status: 400, title: .errorRefused, message: .errorUnreadable)
    static let databaseUnavailable = PageError(status: 503, title: .errorTryAgain, message: .errorDatabaseUnavailable)
}
