import HTTPServer
import JSON

/// Responses shaped as `appleid.apple.com` sends them: JSON with `charset=UTF-8`, never
/// cacheable, and every error a 400 `{"error","error_description"}` (APPLE.md §0).
enum AppleResponse {
    static func headers(contentType: String = "application/json;charset=UTF-8") -> HTTPHeaders {
        ["Content-Type": contentType, "Cache-Control": "no-store", "Pragma": "no-cache"]
    }

    static func json(_ value: JSONValue, status: Int = 200) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers(), body: JSONWriter.bytes(value))
    }

    static func error(_ code: String, _ description: String, status: Int = 400) -> HTTPResponse {
        json(.object(JSONObject([("error", .string(code)), ("error_description", .string(description))])), status: status)
    }

    /// The form of a POST to `/auth/revoke` or `/auth/usermigrationinfo`, or Apple's
    /// `invalid_request` for anything else: another content type, a body that is not
    /// percent-encoded form data, a parameter sent twice.
    static func form(_ request: HTTPRequest) -> Result<FormFields, AppleRefusal> {
        guard FormFields.isFormContentType(request.headers["Content-Type"]) else {
            return .failure(AppleRefusal("Content-Type must be application/x-www-form-urlencoded."))
        }
        do {
            return .success(try FormFields(parsing: request.body))
        } catch .duplicate(let name) {
            return .failure(AppleRefusal("Duplicate parameter: \(name)."))
        } catch {
            return .failure(AppleRefusal("The request body is not percent-encoded form data."))
        }
    }

    /// `/auth/revoke`'s answer: 200 and no body, whether or not anything was revoked.
    static func empty() -> HTTPResponse {
        var headers = headers()
        headers.remove("Content-Type")
        return HTTPResponse(status: 200, headers: headers, body: [])
    }

    /// A page, with the headers that keep reflected input inert (see `ContentSecurityPolicy`).
    static func html(_ page: String, status: Int = 200, policy: String = ContentSecurityPolicy.page()) -> HTTPResponse {
        var headers = headers(contentType: "text/html;charset=UTF-8")
        headers.set("Content-Security-Policy", policy)
        headers.set("X-Frame-Options", "DENY")
        headers.set("X-Content-Type-Options", "nosniff")
        headers.set("Referrer-Policy", "no-referrer")
        return HTTPResponse(status: status, headers: headers, body: Array(page.utf8))
    }
}
