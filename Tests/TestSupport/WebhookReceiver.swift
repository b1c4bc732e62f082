import Foundation
import Glibc
import OpenSSLCrypto
import Synchronization
import SystemThread

/// A team's webhook receiver for tests: a plain HTTP/1.1 server on a loopback socket (threads
/// and `recv`, no code of the server under test) that records every delivery, checks its
/// Standard Webhooks signature on arrival with an HMAC of its own making (Foundation's base64,
/// OpenSSL's HMAC over the bytes as received), and answers as a script says: a status, or hang
/// (hold the connection, answer nothing) until `release()`, or close without a word.
public final class WebhookReceiver: Sendable {
    public enum Answer: Sendable, Equatable {
        case status(Int)
        /// Holds the connection without answering until `release()` or `stop()`, then closes it.
        case hang
        /// Closes the connection without a response.
        case close
    }

    /// One request as it arrived, and what it was answered.
    public struct Delivery: Sendable {
        public let method: String
        public let path: String
        /// Names lower-cased, in order.
        public let headers: [(name: String, value: String)]
        public let body: String
        /// The signature header matched an HMAC computed here.
        public let signatureVerifies: Bool
        public internal(set) var answer: Answer = .status(0)

        public func header(_ name: String) -> String? { headers.first { $0.name == name.lowercased() }?.value }
        public var id: String { header("webhook-id") ?? "" }
        public var timestamp: Int64? { header("webhook-timestamp").flatMap { Int64($0) } }
        /// The body's `type`, or "" when it is not an event.
        public var type: String { json?["type"] as? String ?? "" }
        /// `data.id`: the user the event is about.
        public var userID: String { (json?["data"] as? [String: Any])?["id"] as? String ?? "" }
        public var json: [String: Any]? { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] }
        public var accepted: Bool { if case .status(let status) = answer { (200..<300).contains(status) } else { false } }
    }

    /// Decides the answer to a delivery; `index` counts the deliveries that came before it.
    public typealias Script = @Sendable (_ delivery: Delivery, _ index: Int) -> Answer

    private struct State {
        var deliveries: [Delivery] = []
        var hanging = 0
        var holdsEnded = 0
        var released = false
        var stopped = false
        var openFDs: Set<Int32> = []
        var threads = 0
    }

    public let port: UInt16
    /// The `whsec_…` secret the server is configured with.
    public let secret: String
    /// The secret's key bytes, as `webhook_secret` holds them once read.
    public var secretBytes: [UInt8] { key }
    private let key: [UInt8]
    /// The listening socket's descriptor, closed by the first `stop()` (tests check that a later
    /// one leaves the number alone).
    public let listenerFD: Int32
    private let script: Script
    private let state = Mutex(State())
    /// Wakes hanging connections on `release()`, and `stop()` when the last thread ends.
    private let condition = Condition()

    public var url: String { "http://127.0.0.1:\(port)/hooks/siwa" }

    /// A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes.
    public static func makeSecret() -> String {
        "whsec_" + Data(SecureRandom.bytes(32)).base64EncodedString()
    }

    public init(secret: String = WebhookReceiver.makeSecret(), script: @escaping Script = { _, _ in .status(200) }) throws {
        self.secret = secret
        guard secret.hasPrefix("whsec_"), let decoded = Data(base64Encoded: String(secret.dropFirst(6))) else {
            throw Failure(description: "not a whsec_ secret")
        }
        key = Array(decoded)
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 256) == 0 else {
            close(fd)
            throw Failure(description: "listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listenerFD = fd
        port = UInt16(bigEndian: address.sin_port)
        state.withLock { $0.threads = 1 }
        try SystemThread.startDetached(name: "hook-accept") { [self] in
            acceptLoop()
            threadEnded()
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }
    /// Connections held by `.hang` right now.
    public var hanging: Int { state.withLock { $0.hanging } }
    /// Holds that are over: released, or the sender gave up and closed its end.
    public var holdsEnded: Int { state.withLock { $0.holdsEnded } }

    /// Lets every held connection go (closed without an answer); later `.hang`s do not hold.
    public func release() {
        condition.withLock {
            state.withLock { $0.released = true }
            condition.broadcast()
        }
    }

    /// Waits (polling) until `predicate` holds for the deliveries so far; false after `seconds`.
    public func wait(seconds: Double = 30, until predicate: ([Delivery]) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if predicate(deliveries) { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return predicate(deliveries)
    }

    /// What a team's backend reads to email a reset link: the `data` of the first `count`
    /// `user.password_reset_requested` events accepted, in order, once they have arrived
    /// (`code`, `email`, `id`, `expires_at`); nil if they have not after `seconds`.
    public func passwordResetRequests(_ count: Int, seconds: Double = 30) async -> [[String: String]]? {
        await codeRequests("user.password_reset_requested", count, seconds: seconds)
    }

    /// The same for the codes that prove an email (`user.email_verification_requested`).
    public func emailVerificationRequests(_ count: Int, seconds: Double = 30) async -> [[String: String]]? {
        await codeRequests("user.email_verification_requested", count, seconds: seconds)
    }

    /// The `data` of the first `count` accepted events of `type`, once they have arrived.
    public func codeRequests(_ type: String, _ count: Int, seconds: Double = 30) async -> [[String: String]]? {
        // Webhooks come at least once: a delivery the server retried (its answer lost on a loaded
        // machine) is the same event again, counted once by its webhook-id.
        func requests(_ deliveries: [Delivery]) -> [[String: String]] {
            var seen = Set<String>()
            return deliveries.filter { $0.accepted && $0.type == type && seen.insert($0.id).inserted }
                .compactMap { ($0.json?["data"] as? [String: Any])?.compactMapValues { $0 as? String } }
        }
        guard await wait(seconds: seconds, until: { requests($0).count >= count }) else { return nil }
        return Array(requests(deliveries).prefix(count))
    }

    /// Ends every connection and thread and closes the listener. Idempotent: fixtures that share
    /// a receiver, or stop early and again at scope exit, call it more than once, and closing the
    /// listener's number again would close whatever file reused it meanwhile (another test's
    /// SQLite database, which then failed with "disk I/O error").
    public func stop() {
        let first = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            state.stopped = true
            // Under the lock: a connection thread removes its descriptor here before closing it,
            // so no number another thread has reused is shut down.
            for fd in state.openFDs { shutdown(fd, Int32(SHUT_RDWR)) }
            return true
        }
        guard first else { return }
        shutdown(listenerFD, Int32(SHUT_RDWR))
        release()
        condition.withLock {
            while state.withLock({ $0.threads }) > 0 { _ = condition.wait(seconds: 1) }
        }
        close(listenerFD)
    }

    /// Every delivery so far checked by the `standardwebhooks` package (PyPI), the reference
    /// implementation: returns how many verified; throws naming the first that did not. With
    /// `anyTimestamp`, its five-minute window around the real time is left out (for a server on
    /// a held clock); the signature is checked all the same.
    public func verifyWithStandardWebhooks(anyTimestamp: Bool = false) async throws -> Int {
        let list = deliveries.map { delivery -> [String: Any] in
            ["headers": Dictionary(delivery.headers.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first }), "body": delivery.body]
        }
        let file = NSTemporaryDirectory() + "webhooks-" + UUID().uuidString + ".json"
        try JSONSerialization.data(withJSONObject: list).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        let script = """
            import json, sys
            from datetime import datetime, timezone
            from standardwebhooks import Webhook
            secret, path, any_timestamp = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
            if any_timestamp:
                Webhook._Webhook__verify_timestamp = lambda self, header: datetime.fromtimestamp(float(header), tz=timezone.utc)
            webhook = Webhook(secret)
            deliveries = json.load(open(path))
            for index, delivery in enumerate(deliveries):
                try:
                    webhook.verify(delivery["body"], delivery["headers"])
                except Exception as error:
                    sys.exit(f"delivery {index} ({delivery['headers'].get('webhook-id')}): {error}")
            print(len(deliveries))
            """
        let output = try await PythonTools.run(script, [secret, file, anyTimestamp ? "1" : "0"])
        return Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    // MARK: - Sockets

    private func threadEnded() {
        condition.withLock {
            state.withLock { $0.threads -= 1 }
            condition.broadcast()
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listenerFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let admitted = state.withLock {
                guard !$0.stopped else { return false }
                $0.openFDs.insert(fd)
                $0.threads += 1
                return true
            }
            guard admitted else {
                close(fd)
                return
            }
            do {
                try SystemThread.startDetached(name: "hook-conn") { [self] in
                    serve(fd)
                    state.withLock { _ = $0.openFDs.remove(fd) }
                    close(fd)
                    threadEnded()
                }
            } catch {
                state.withLock { _ = $0.openFDs.remove(fd) }
                close(fd)
                threadEnded()
            }
        }
    }

    private func serve(_ fd: Int32) {
        var buffer: [UInt8] = []
        while var delivery = readRequest(fd, &buffer) {
            let index = state.withLock { $0.deliveries.count }
            delivery.answer = script(delivery, index)
            state.withLock { $0.deliveries.append(delivery) }
            switch delivery.answer {
            case .status(let status):
                guard sendAll(fd, Array("HTTP/1.1 \(status) Scripted\r\nContent-Length: 0\r\n\r\n".utf8)) else { return }
            case .close:
                return
            case .hang:
                // Held until released, or until the sender gives up and closes its end.
                condition.withLock {
                    state.withLock { $0.hanging += 1 }
                    while !state.withLock({ $0.released || $0.stopped }) && !peerClosed(fd) { _ = condition.wait(seconds: 1) }
                    state.withLock {
                        $0.hanging -= 1
                        $0.holdsEnded += 1
                    }
                }
                return
            }
        }
    }

    /// One request: a head, then a Content-Length body. Nil once the peer closes.
    private func readRequest(_ fd: Int32, _ buffer: inout [UInt8]) -> Delivery? {
        let terminator = Array("\r\n\r\n".utf8)
        while true {
            if let range = buffer.firstRange(of: terminator) {
                let lines = String(decoding: buffer[..<range.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
                let requestLine = lines.first?.split(separator: " ") ?? []
                let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
                    guard let colon = line.firstIndex(of: ":") else { return nil }
                    return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
                }
                let length = headers.first { $0.name == "content-length" }.flatMap { Int($0.value) } ?? 0
                let start = range.upperBound
                while buffer.count < start + length {
                    guard fill(fd, &buffer) else { return nil }
                }
                let body = Array(buffer[start..<(start + length)])
                buffer.removeFirst(start + length)
                return Delivery(
                    method: requestLine.first.map(String.init) ?? "", path: requestLine.dropFirst().first.map(String.init) ?? "",
                    headers: headers, body: String(decoding: body, as: UTF8.self), signatureVerifies: verifies(headers, body))
            }
            guard fill(fd, &buffer) else { return nil }
        }
    }

    /// `v1,` + base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")), computed from what arrived.
    private func verifies(_ headers: [(name: String, value: String)], _ body: [UInt8]) -> Bool {
        func value(_ name: String) -> String? { headers.first { $0.name == name }?.value }
        guard let id = value("webhook-id"), let timestamp = value("webhook-timestamp"), let signature = value("webhook-signature") else {
            return false
        }
        let expected = "v1," + Data(HMACSHA256.mac(key: key, message: Array("\(id).\(timestamp).".utf8) + body)).base64EncodedString()
        return signature.split(separator: " ").contains { $0 == expected }
    }

    /// Whether the other end has closed (a zero-byte peek), without waiting.
    private func peerClosed(_ fd: Int32) -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
    }

    private func fill(_ fd: Int32, _ buffer: inout [UInt8]) -> Bool {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { return false }
        buffer.append(contentsOf: chunk[0..<count])
        return true
    }

    private func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }
}
