// Hummingbird 2 answering GET /healthz with the same body and Content-Type as siwa-server.
// Usage: healthz-hummingbird [PORT]   (or PORT in the environment; default 8080). Loopback only.
import Hummingbird
import Logging
import NIOCore

let port = CommandLine.arguments.dropFirst().first.flatMap { Int($0) }
    ?? Environment().get("PORT").flatMap { Int($0) }
    ?? 8080

// One immutable buffer shared by every response: NIO copies on write, so this is what a tuned
// Hummingbird app would do, and the comparison measures the servers, not JSON encoding.
let body = ByteBuffer(string: #"{"status":"ok"}"#)

let router = Router()
router.get("healthz") { _, _ -> Response in
    Response(
        status: .ok,
        headers: [.contentType: "application/json"],
        body: ResponseBody(byteBuffer: body)
    )
}

// Warnings only, so no line per request. siwa-server runs at log level info in the benchmark,
// which writes one access line per request: it does more work in this comparison, not less.
var logger = Logger(label: "healthz-hummingbird")
logger.logLevel = .warning

let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: port), serverName: nil),
    logger: logger
)
try await app.runService()
