import Foundation
import Glibc
import Testing
import TestSupport

/// The test receiver is stopped more than once: by each fixture that shares it, and again at
/// scope exit by a fixture that stopped early.
struct WebhookReceiverTests {
    /// A second `stop()` once closed the listener's number again. In a process running many
    /// tests at once that number is soon another test's file, a SQLite database among them,
    /// whose next read then failed with "disk I/O error" (10/266, 10/522).
    @Test func stoppingAgainLeavesTheListenersReusedNumberToItsNewOwner() throws {
        let path = NSTemporaryDirectory() + "webhook-receiver-" + UUID().uuidString
        let contents = Array("another test's database".utf8)
        try Data(contents).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let file = open(path, O_RDONLY | O_CLOEXEC)
        try #require(file >= 0)
        defer { close(file) }

        // Other tests' threads may take the freed number first; then try with another receiver.
        var attempt = 0
        while true {
            attempt += 1
            let receiver = try WebhookReceiver()
            let number = receiver.listenerFD
            receiver.stop()
            let reused = fcntl(file, F_DUPFD_CLOEXEC, number)
            try #require(reused >= 0)
            guard reused == number else {
                close(reused)
                try #require(attempt < 50, "another thread took the freed number every time")
                continue
            }
            defer { close(reused) }

            receiver.stop()
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = pread(number, &bytes, bytes.count, 0)
            #expect(count == contents.count, "the number still reads the file that reused it")
            #expect(Array(bytes.prefix(max(0, count))) == contents)
            var reusedInfo = stat()
            var fileInfo = stat()
            #expect(fstat(number, &reusedInfo) == 0 && fstat(file, &fileInfo) == 0 && reusedInfo.st_ino == fileInfo.st_ino)
            #expect(receiver.deliveries.isEmpty)
            return
        }
    }
}
