#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Logging
import SystemThread
import Synchronization

/// Where formatted log lines go: a bounded in-memory buffer that a background thread writes out
/// every ~50 ms, or sooner once 64 KiB are waiting.
///
/// Logging on the request path then costs a lock and a copy, never a `write(2)` to a slow
/// terminal or a full pipe. When the output cannot keep up and the buffer reaches its bound,
/// lines are dropped and counted, and one line saying how many replaces them.
public final class LogSink: Sendable {
    /// Receives batches of whole lines, each ending in `\n`, in the order they were appended.
    public typealias Writer = @Sendable ([UInt8]) -> Void

    /// The process's stdout.
    public static let standardOutput = LogSink(writer: fileDescriptorWriter(1))

    private struct State {
        var buffer: [UInt8] = []
        var dropped = 0
        var wakePending = false
        var format: LogFormat
    }

    private let state: Mutex<State>
    /// Held while a batch is written, so batches from the background thread and `flush()`
    /// never interleave; holds the spare buffer that is swapped with the live one.
    private let writing = Mutex<[UInt8]>([])
    private let writer: Writer
    private let capacity: Int
    private let wakeThreshold: Int
    private let wake: DispatchSemaphore?

    /// - Parameters:
    ///   - format: the format of the line reporting dropped lines.
    ///   - capacity: bytes buffered at most; past this, lines are dropped.
    ///   - wakeThreshold: buffered bytes that trigger a write before the interval is up.
    ///   - interval: how often the background thread writes.
    ///   - drainsInBackground: false for a sink written only by `flush()` (tests).
    ///   - writer: where batches go.
    public init(
        format: LogFormat = .json,
        capacity: Int = 8 << 20,
        wakeThreshold: Int = 64 << 10,
        interval: Duration = .milliseconds(50),
        drainsInBackground: Bool = true,
        writer: @escaping Writer
    ) {
        state = Mutex(State(format: format))
        self.writer = writer
        self.capacity = capacity
        self.wakeThreshold = wakeThreshold
        guard drainsInBackground else {
            wake = nil
            return
        }
        let semaphore = DispatchSemaphore(value: 0)
        wake = semaphore
        let (seconds, attoseconds) = interval.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        // The thread holds the sink weakly, so a sink nobody uses any more (in tests) is freed
        // and its thread ends at the next tick.
        // Without its writer thread the sink would buffer until it drops lines; better to stop.
        try! SystemThread.startDetached(name: "siwa-log-writer") { [weak self] in
            while true {
                _ = semaphore.wait(timeout: .now() + .nanoseconds(max(nanoseconds, 1_000_000)))
                guard let sink = self else { return }
                sink.drain()
            }
        }
    }

    /// The format of the dropped-lines notice; set by `LoggingSetup.bootstrap`.
    public var format: LogFormat {
        get { state.withLock { $0.format } }
        set { state.withLock { $0.format = newValue } }
    }

    /// Queues one line; a `\n` is added. Never blocks on output.
    public func append(_ line: [UInt8]) {
        let wakeNow = state.withLock { state -> Bool in
            guard state.buffer.count + line.count + 1 <= capacity else {
                state.dropped += 1
                return false
            }
            state.buffer.append(contentsOf: line)
            state.buffer.append(UInt8(ascii: "\n"))
            guard state.buffer.count >= wakeThreshold, !state.wakePending else { return false }
            state.wakePending = true
            return true
        }
        if wakeNow { wake?.signal() }
    }

    public func append(_ line: String) {
        append(Array(line.utf8))
    }

    /// Writes everything queued so far before returning. Call at shutdown and before `exit`.
    public func flush() {
        drain()
    }

    private func drain() {
        writing.withLock { batch in
            let (dropped, format) = state.withLock { state in
                swap(&state.buffer, &batch)
                state.wakePending = false
                defer { state.dropped = 0 }
                return (state.dropped, state.format)
            }
            if dropped > 0 {
                batch.append(contentsOf: Self.droppedNotice(dropped, format: format))
                batch.append(UInt8(ascii: "\n"))
            }
            if !batch.isEmpty { writer(batch) }
            // Keep a normal-sized buffer for reuse, but give back the memory of a burst.
            batch.removeAll(keepingCapacity: batch.capacity <= 1 << 20)
        }
    }

    private static func droppedNotice(_ count: Int, format: LogFormat) -> [UInt8] {
        let message = "\(count) log line\(count == 1 ? " was" : "s were") dropped: output could not keep up"
        let metadata: Logger.Metadata = ["dropped_lines": .stringConvertible(count)]
        switch format {
        case .json:
            return JSONLogHandler.line(
                time: LogTimestamp.now(), level: .warning, label: "siwa.log", message: message, metadata: metadata
            )
        case .text:
            return TextLogHandler.line(
                time: LogTimestamp.now(), level: .warning, label: "siwa.log", message: message, metadata: metadata
            )
        }
    }

    /// A writer to a file descriptor that writes whole batches, retrying short writes and
    /// `EINTR`, and waiting (boundedly) when the descriptor is non-blocking and full.
    public static func fileDescriptorWriter(_ descriptor: Int32) -> Writer {
        { bytes in
            bytes.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var offset = 0
                var stalls = 0
                while offset < raw.count {
                    let written = write(descriptor, base + offset, raw.count - offset)
                    if written > 0 {
                        offset += written
                        stalls = 0
                    } else if written < 0, errno == EINTR {
                        continue
                    } else if written < 0, errno == EAGAIN || errno == EWOULDBLOCK, stalls < 10 {
                        stalls += 1
                        var descriptorPoll = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&descriptorPoll, 1, 1_000)
                    } else {
                        // Closed pipe, full disk, or stalled for 10 s: losing log output must
                        // never take the server down, so give up on this batch.
                        return
                    }
                }
            }
        }
    }
}
