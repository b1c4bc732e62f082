import Foundation
import Glibc

/// A minimal HTTP/1.1 client for tests: one request per connection, `Connection: close`, the
/// whole response read until the server closes. The blocking socket work runs on a thread of
/// its own: a test blocking one of the two cooperative threads would starve the server's own
/// background tasks (a key refetch, the revocation worker) that the answer waits for.
public enum HTTPGet {
    /// One request without a body (`method` GET unless said); header names come back lower-cased.
    public static func run(port: UInt16, method: String = "GET", path: String, headers: [String: String] = [:]) async throws
        -> (status: Int, headers: [String: String], body: String)
    {
        var request = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        if method != "GET" && method != "HEAD" { request += "Content-Length: 0\r\n" }
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        let text = try await raw(port: port, request + "\r\n")
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure.malformed }
        var lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw Failure.malformed }
        var fields: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, fields, String(text[split.upperBound...]))
    }

    public enum Failure: Error { case connect, malformed }

    /// Sends `request` as is and returns everything the server sends back before closing.
    public static func raw(port: UInt16, _ request: String) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try rawBlocking(port: port, request) }) }
        }
    }

    /// `raw` on the calling thread: only for threads of a test's own, never a cooperative one.
    public static func rawBlocking(port: UInt16, _ request: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        // A bound on failure, not a speed check: the whole suite shares two cores, and an answer
        // behind password hashes (low-priority threads) took over 30 s with the cores busy.
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure.connect }
        let bytes = Array(request.utf8)
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count <= 0 { break }
            received.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: received, as: UTF8.self)
    }
}
