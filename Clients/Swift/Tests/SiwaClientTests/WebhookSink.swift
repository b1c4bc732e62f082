import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The team's webhook receiver, as small as it can be: a loopback socket on a thread that
/// answers every POST 204 and keeps its body. The password tests read verification codes from it
/// (without SMTP the server sends them as `user.email_verification_requested` events).
final class WebhookSink: @unchecked Sendable {
    let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var bodies: [String] = []

    init() throws {
        #if canImport(Glibc)
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let listener = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, address, &length) == 0
            }
        }
        guard listener >= 0, bound else { throw SiwaTestFailure("the webhook sink cannot listen") }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// The events received so far, parsed.
    var events: [[String: Any]] {
        lock.lock()
        defer { lock.unlock() }
        return bodies.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    /// The `data.code` of the newest event of `type` about `email`.
    func code(type: String, email: String) -> String? {
        events.last { event in
            event["type"] as? String == type && ((event["data"] as? [String: Any])?["email"] as? String)?.lowercased() == email.lowercased()
        }.flatMap { ($0["data"] as? [String: Any])?["code"] as? String }
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 { return }
            if let body = Self.readBody(connection) {
                lock.lock()
                bodies.append(body)
                lock.unlock()
            }
            let answer = Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, 0) }
            close(connection)
        }
    }

    /// The body after the headers, `Content-Length` bytes of it.
    private static func readBody(_ connection: Int32) -> String? {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return nil }
            received += buffer[0..<count]
            let text = String(decoding: received, as: UTF8.self)
            guard let end = text.range(of: "\r\n\r\n") else { continue }
            let head = text[..<end.lowerBound].lowercased()
            let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            let headBytes = text[..<end.upperBound].utf8.count
            if received.count - headBytes >= length {
                return String(decoding: received[headBytes..<(headBytes + length)], as: UTF8.self)
            }
        }
    }
}
