import Glibc
import SystemThread
import Testing

@Suite struct SystemThreadTests {
    /// This thread's name as the kernel keeps it.
    static func currentName() -> String {
        guard let file = fopen("/proc/thread-self/comm", "r") else { return "?" }
        defer { fclose(file) }
        var buffer = [CChar](repeating: 0, count: 64)
        guard fgets(&buffer, Int32(buffer.count), file) != nil else { return "?" }
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return line.hasSuffix("\n") ? String(line.dropLast()) : line
    }

    /// The starting thread names the new one just after creating it, so the new thread may
    /// run briefly under its creator's name: wait (boundedly) for its own.
    static func nameOnceSet(expected: String) -> String {
        let deadline = monotonicSeconds() + 10
        var name = currentName()
        while name != expected, monotonicSeconds() < deadline {
            usleep(1_000)
            name = currentName()
        }
        return name
    }

    @Test func threadsAreNamedUpToLinuxsFifteenCharacters() async throws {
        let short = try await withCheckedThrowingContinuation { continuation in
            do {
                try SystemThread.startDetached(name: "siwa-short") { continuation.resume(returning: Self.nameOnceSet(expected: "siwa-short")) }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        #expect(short == "siwa-short")
        let long = try await withCheckedThrowingContinuation { continuation in
            do {
                try SystemThread.startDetached(name: "siwa-a-very-long-thread-name") {
                    continuation.resume(returning: Self.nameOnceSet(expected: "siwa-a-very-lon"))
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        #expect(long == "siwa-a-very-lon")
    }

    @Test func aJoinableThreadRunsItsBody() throws {
        let box = Box()
        let thread = try SystemThread.start(name: "joined") { box.condition.withLock { box.value = 5 } }
        pthread_join(thread, nil)
        #expect(box.condition.withLock { box.value } == 5)
    }
}
