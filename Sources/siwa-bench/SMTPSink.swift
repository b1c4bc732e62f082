// The mail benchmarks' SMTP server: on loopback, accepts every message at once (one thread a
// connection, a fixed reply a command, nothing parsed or kept), or with --silent accepts TCP
// connections and never says a word (the deliverer waits out its step deadline).
//
//   siwa-bench smtp-sink SMTP_PORT STATS_PORT [--silent]
//
// GET /stats on STATS_PORT answers {"received":N,"connections":N,"open":N,"first_us":T,"last_us":T}
// (T: when the first and the latest message ended, microseconds of the realtime clock, 0 before
// any). Serves until killed.
import Glibc
import HTTPServer
import Synchronization
import SystemThread

struct SMTPSink {
    let port: UInt16
    let statsPort: UInt16
    let silent: Bool

    private final class Counts: Sendable {
        let received = Atomic<Int>(0)
        let connections = Atomic<Int>(0)
        let open = Atomic<Int>(0)
        let firstMicroseconds = Atomic<Int>(0)
        let lastMicroseconds = Atomic<Int>(0)

        func message() {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let microseconds = now.tv_sec * 1_000_000 + now.tv_nsec / 1_000
            _ = firstMicroseconds.compareExchange(expected: 0, desired: microseconds, ordering: .relaxed)
            lastMicroseconds.max(microseconds, ordering: .relaxed)
            received.add(1, ordering: .relaxed)
        }
    }

    init(arguments: [String]) throws {
        guard arguments.count >= 2, let port = UInt16(arguments[0]), let statsPort = UInt16(arguments[1]) else {
            throw AppleFixture.Failure("usage: siwa-bench smtp-sink SMTP_PORT STATS_PORT [--silent]")
        }
        self.port = port
        self.statsPort = statsPort
        silent = arguments.dropFirst(2).contains("--silent")
    }

    func run() throws {
        let counts = Counts()
        var router = Router()
        router.add(.get, "/stats") { _ in
            .json(
                200,
                #"{"received":\#(counts.received.load(ordering: .relaxed)),"connections":\#(counts.connections.load(ordering: .relaxed)),"open":\#(counts.open.load(ordering: .relaxed)),"first_us":\#(counts.firstMicroseconds.load(ordering: .relaxed)),"last_us":\#(counts.lastMicroseconds.load(ordering: .relaxed))}"#)
        }
        let stats = HTTPServer(configuration: HTTPServerConfiguration(host: "127.0.0.1", port: statsPort, threads: 1), router: router)
        _ = try stats.start()

        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw AppleFixture.Failure("socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(listener, 128) == 0 else { throw AppleFixture.Failure("bind 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        let silent = self.silent
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { continue }
            counts.connections.add(1, ordering: .relaxed)
            counts.open.add(1, ordering: .relaxed)
            if silent { continue } // held open, never answered, never closed
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
            try SystemThread.startDetached(name: "smtp-sink") {
                Self.serve(fd) { counts.message() }
                counts.open.subtract(1, ordering: .relaxed)
                close(fd)
            }
        }
    }

    /// One conversation: every command line gets its fixed reply, written once no more input
    /// is waiting (so a pipelining client gets its replies together); DATA runs to the lone dot.
    private static func serve(_ fd: Int32, received: () -> Void) {
        var input: [UInt8] = []
        var output = Array("220 sink ESMTP\r\n".utf8)
        var inData = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            // Consume every complete line.
            var start = 0
            var quit = false
            while let newline = input[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = input[start..<newline]
                start = newline + 1
                if inData {
                    if line.count == 2, line.first == UInt8(ascii: "."), line.last == UInt8(ascii: "\r") {
                        inData = false
                        received()
                        output += Array("250 2.0.0 queued\r\n".utf8)
                    }
                    continue
                }
                let verb = String(decoding: line.prefix(4), as: UTF8.self).uppercased()
                switch verb {
                case "EHLO": output += Array("250-sink\r\n250-8BITMIME\r\n250 SIZE 10485760\r\n".utf8)
                case "DATA":
                    inData = true
                    output += Array("354 go on\r\n".utf8)
                case "QUIT":
                    output += Array("221 bye\r\n".utf8)
                    quit = true
                default: output += Array("250 ok\r\n".utf8)
                }
            }
            input.removeFirst(start)
            var more = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if !output.isEmpty, quit || poll(&more, 1, 0) == 0 {
                var sent = 0
                while sent < output.count {
                    let n = output[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                    guard n > 0 else { return }
                    sent += n
                }
                output.removeAll(keepingCapacity: true)
            }
            if quit { return }
            let n = read(fd, &buffer, buffer.count)
            guard n > 0 else { return }
            input += buffer[0..<n]
        }
    }
}
