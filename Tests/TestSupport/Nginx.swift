import Foundation
import Glibc

/// Debian's nginx, run by a test in a folder of its own with a configuration it writes: in the
/// foreground (`daemon off`), its pid, logs and temporary files in that folder, stopped with the
/// test. Tests that need it guard themselves with `.enabled(if: Nginx.testsEnabled)`.
public final class Nginx: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static let binary = "/usr/sbin/nginx"

    /// Whether the nginx tests run: when it is installed, and always under CI (`CI=true`),
    /// where a missing nginx must fail them. Elsewhere they are skipped, loudly.
    public static let testsEnabled: Bool = {
        if FileManager.default.isExecutableFile(atPath: binary) || ProcessInfo.processInfo.environment["CI"] == "true" { return true }
        FileHandle.standardError.write(Data("""
            WARNING: nginx is not installed: the forward-authentication tests behind nginx are SKIPPED, not passed.
            WARNING: install it with Scripts/install-packages (Debian: nginx).

            """.utf8))
        return false
    }()

    public let folder: String
    public let port: UInt16
    private let child: ChildProcess

    /// Starts nginx with `http` as the body of its `http {}` block; `listen 80;` in it is
    /// replaced by a free loopback port, which `port` gives.
    public init(http: String) async throws {
        folder = NSTemporaryDirectory() + "siwa-nginx-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        let body = http.replacingOccurrences(of: "listen 80;", with: "listen 127.0.0.1:\(port);")
        // As root, nginx's workers would switch to `nobody`, who cannot read this folder.
        let user = geteuid() == 0 ? "user root;\n" : ""
        let configuration = """
            \(user)worker_processes 1;
            pid \(folder)/nginx.pid;
            error_log \(folder)/error.log warn;
            events { worker_connections 256; }
            http {
                access_log off;
                client_body_temp_path \(folder)/client_body;
                proxy_temp_path \(folder)/proxy;
                fastcgi_temp_path \(folder)/fastcgi;
                uwsgi_temp_path \(folder)/uwsgi;
                scgi_temp_path \(folder)/scgi;
            \(body)
            }
            """
        try configuration.write(toFile: folder + "/nginx.conf", atomically: true, encoding: .utf8)
        child = try ChildProcess(
            executable: Self.binary, arguments: ["-p", folder, "-c", folder + "/nginx.conf", "-g", "daemon off;"],
            environment: ProcessInfo.processInfo.environment)
        try await waitUntilListening()
    }

    deinit {
        child.signal(SIGTERM)
        try? FileManager.default.removeItem(atPath: folder)
    }

    public func stop() async {
        child.signal(SIGQUIT)
        _ = await child.wait(seconds: 10)
    }

    /// What nginx logged, for a failing test's message.
    public var errorLog: String {
        ((try? String(contentsOfFile: folder + "/error.log", encoding: .utf8)) ?? "") + child.stderrText
    }

    private func waitUntilListening() async throws {
        for _ in 0..<2400 {  // a bound on failure, generous for a loaded machine
            guard child.isRunning else { throw Failure(description: "nginx exited: \(child.stderrText) \(errorLog)") }
            if Self.accepts(port) { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw Failure(description: "nginx did not listen on \(port) within 60 s: \(errorLog)")
    }

    private static func accepts(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    /// A port the kernel just gave out and took back (nginx cannot be told to bind port 0 and
    /// report it); a race with another process taking it is possible but unlikely on loopback.
    public static func freePort() throws -> UInt16 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind: \(errno)") }
        return UInt16(bigEndian: address.sin_port)
    }
}
