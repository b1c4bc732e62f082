import HTTPServer
import JSON

/// A control API request the simulator cannot act on: 400 `invalid_request`.
struct ControlFailure: Error, Sendable, Equatable, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    var response: HTTPResponse { ControlResponse.error(description) }
}

/// The control API's JSON answers.
enum ControlResponse {
    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(
            status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: JSONWriter.bytes(value))
    }

    static func object(_ members: [(String, JSONValue?)], status: Int = 200) -> HTTPResponse {
        json(.object(.compact(members)), status: status)
    }

    static func error(_ description: String, code: String = "invalid_request", status: Int = 400) -> HTTPResponse {
        object([("error", .string(code)), ("error_description", .string(description))], status: status)
    }
}
