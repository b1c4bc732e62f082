import HTTPServer

/// The errors of a route people reach in a browser: whatever it throws is shown as a page
/// (an unexpected error too), with `headers` added (the web callback clears its cookie).
struct ShownAsPage: Error {
    let error: any Error
    var headers: [(String, String)] = []

    /// Wraps a page route's handler.
    static func route(_ handler: @escaping HTTPHandler) -> HTTPHandler {
        { request in
            do {
                return try await handler(request)
            } catch let error as ShownAsPage {
                throw error
            } catch {
                throw ShownAsPage(error: error)
            }
        }
    }
}
