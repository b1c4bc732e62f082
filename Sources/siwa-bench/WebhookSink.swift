// The webhook benchmarks' receiver: an HTTP server on loopback that checks every delivery's
// Standard Webhooks signature and answers 204, or, with --hang, holds every delivery without an
// answer (the deliverer gives up after its 10 s deadline and retries later).
//
//   siwa-bench webhook-receiver PORT SECRET [--hang]
//
// GET /stats answers {"received":N,"bad_signatures":N,"hanging":N}. Serves until killed.
import Glibc
import HTTPServer
import OpenSSLCrypto
import Synchronization
import WireFormat

struct WebhookSink {
    let port: UInt16
    let key: [UInt8]
    let hang: Bool

    private final class Counts: Sendable {
        let received = Atomic<Int>(0)
        let bad = Atomic<Int>(0)
        let hanging = Atomic<Int>(0)
    }

    init(arguments: [String]) throws {
        guard arguments.count >= 2, let port = UInt16(arguments[0]), arguments[1].hasPrefix("whsec_"),
              let key = Base64(alphabet: .standard, padding: .optional).decode(String(arguments[1].dropFirst(6)))
        else { throw AppleFixture.Failure("usage: siwa-bench webhook-receiver PORT whsec_SECRET [--hang]") }
        self.port = port
        self.key = key
        hang = arguments.dropFirst(2).contains("--hang")
    }

    func run() throws {
        let counts = Counts()
        let key = self.key
        let hang = self.hang
        var router = Router()
        router.add(.post, "/hooks") { request in
            counts.received.add(1, ordering: .relaxed)
            let id = request.headers["webhook-id"] ?? "", timestamp = request.headers["webhook-timestamp"] ?? ""
            let expected = "v1," + Base64.standard.encode(HMACSHA256.mac(key: key, message: Array("\(id).\(timestamp).".utf8) + request.body))
            if request.headers["webhook-signature"] != expected { counts.bad.add(1, ordering: .relaxed) }
            if hang {
                counts.hanging.add(1, ordering: .relaxed)
                try? await Task.sleep(for: .seconds(3_600))
                counts.hanging.subtract(1, ordering: .relaxed)
            }
            return HTTPResponse(status: 204)
        }
        router.add(.get, "/stats") { _ in
            .json(
                200,
                #"{"received":\#(counts.received.load(ordering: .relaxed)),"bad_signatures":\#(counts.bad.load(ordering: .relaxed)),"hanging":\#(counts.hanging.load(ordering: .relaxed))}"#)
        }
        let server = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: port, threads: 1), router: router)
        _ = try server.start()
        while true { pause() }
    }
}
