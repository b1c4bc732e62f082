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

/// Where formatted log lines go: a background thread writes them out every ~50 ms, or sooner
/// once 64 KiB are waiting, so logging never costs a `write(2)` to a slow terminal or a full pipe.
///
/// Access lines (`appendLine`), one per request, are encoded straight into a buffer of the
/// calling thread's own and copied into that thread's ring (`LogRing`): no lock is shared between
/// the I/O threads, and one thread's lines keep their order (a connection is served by one I/O
/// thread, so its lines do too). Other lines (`append`) go through one locked buffer, which keeps
/// the order of a task that moves between threads. When the output cannot keep up and a buffer
/// reaches its bound, lines are dropped (never a part of one) and counted (`droppedLines`), and
/// one line saying how many replaces them.
public final class LogSink: Sendable {
    /// Receives batches of whole lines, each ending in `\n`, in the order they were appended.
    public typealias Writer = @Sendable ([UInt8]) -> Void

    /// The process's stdout.
    public static let standardOutput = LogSink(writer: fileDescriptorWriter(1))

    /// All the sink's state. The writer thread holds it, and the sink only weakly (through
    /// `lifetime`): a weak reference to the sink itself would send every retain of it, one
    /// per access line, down the runtime's slow side-table path.
    private let core: Core
    /// What the writer thread holds weakly: gone with the sink, which ends the thread.
    private let lifetime = Lifetime()

    /// - Parameters:
    ///   - format: the format of the line reporting dropped lines.
    ///   - capacity: bytes of `append` lines buffered at most; past this, lines are dropped.
    ///   - threadCapacity: bytes of `appendLine` lines buffered at most per thread.
    ///   - wakeThreshold: buffered bytes that trigger a write before the interval is up.
    ///   - interval: how often the background thread writes.
    ///   - drainsInBackground: false for a sink written only by `flush()` (tests).
    ///   - writer: where batches go.
    public init(
        format: LogFormat = .json,
        capacity: Int = 8 << 20,
        threadCapacity: Int = 2 << 20,
        wakeThreshold: Int = 64 << 10,
        interval: Duration = .milliseconds(50),
        drainsInBackground: Bool = true,
        writer: @escaping Writer
    ) {
        let core = Core(
            format: format, capacity: capacity, threadCapacity: threadCapacity, wakeThreshold: wakeThreshold,
            wake: drainsInBackground ? DispatchSemaphore(value: 0) : nil, writer: writer)
        self.core = core
        guard let semaphore = core.wake else { return }
        let (seconds, attoseconds) = interval.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        // A sink nobody uses any more (in tests) is freed and its thread ends at the next tick.
        // Without its writer thread the sink would buffer until it drops lines; better to stop.
        let lifetime = self.lifetime
        try! SystemThread.startDetached(name: "siwa-log-writer") { [weak lifetime] in
            while true {
                _ = semaphore.wait(timeout: .now() + .nanoseconds(max(nanoseconds, 1_000_000)))
                guard lifetime != nil else { return }
                core.drain()
            }
        }
    }

    deinit {
        core.sinkGone()
    }

    /// The format of the dropped-lines notice; set by `LoggingSetup.bootstrap`.
    public var format: LogFormat {
        get { core.state.withLock { $0.format } }
        set { core.state.withLock { $0.format = newValue } }
    }

    /// Lines dropped since the sink was made, because the output could not keep up.
    public var droppedLines: Int { core.droppedTotal.load(ordering: .relaxed) }

    /// Queues one line; a `\n` is added. Never blocks on output.
    public func append(_ line: [UInt8]) {
        core.append(line)
    }

    /// Queues the line `encode` writes (without its `\n`) in the calling thread's own ring:
    /// no lock, no allocation once the thread's buffer has grown. Never blocks on output.
    public func appendLine(_ encode: (inout [UInt8]) -> Void) {
        core.appendLine(encode)
    }

    public func append(_ line: String) {
        append(Array(line.utf8))
    }

    /// Writes everything queued so far before returning. Call at shutdown and before `exit`.
    public func flush() {
        core.drain()
    }

    private final class Lifetime: Sendable {}

    private final class Core: Sendable {
        struct State {
            var buffer: [UInt8] = []
            var dropped = 0
            var format: LogFormat
        }

        private static let nextID = Atomic<Int>(0)

        let state: Mutex<State>
        /// Held while a batch is gathered and written, so batches from the background thread and
        /// `flush()` never interleave and each ring has one consumer; holds the batch's buffer.
        private let writing = Mutex<[UInt8]>([])
        private let writer: Writer
        private let capacity: Int
        private let threadCapacity: Int
        private let wakeThreshold: Int
        let wake: DispatchSemaphore?
        /// Set while a wake-up is outstanding, so a burst of lines past the threshold signals once.
        private let wakePending = Atomic<Bool>(false)
        /// Names this sink in each thread's `ThreadLogRings`.
        private let id = Core.nextID.add(1, ordering: .relaxed).newValue
        /// Every thread's ring for this sink, for the writer to empty.
        private let rings = Mutex<[LogRing]>([])
        let droppedTotal = Atomic<Int>(0)

        init(format: LogFormat, capacity: Int, threadCapacity: Int, wakeThreshold: Int, wake: DispatchSemaphore?, writer: @escaping Writer) {
            state = Mutex(State(format: format))
            self.writer = writer
            self.capacity = capacity
            self.threadCapacity = threadCapacity
            self.wakeThreshold = wakeThreshold
            self.wake = wake
        }

        /// The sink has gone: each thread forgets its ring for it.
        func sinkGone() {
            for ring in rings.withLock({ $0 }) { ring.sinkGone.store(true, ordering: .releasing) }
        }

        func append(_ line: [UInt8]) {
            let outcome = state.withLock { state -> Bool? in
                guard state.buffer.count + line.count + 1 <= capacity else {
                    state.dropped += 1
                    return nil
                }
                state.buffer.append(contentsOf: line)
                state.buffer.append(UInt8(ascii: "\n"))
                return state.buffer.count >= wakeThreshold
            }
            switch outcome {
            case nil: droppedTotal.add(1, ordering: .relaxed)
            case true?: signalWriter()
            case false?: break
            }
        }

        func appendLine(_ encode: (inout [UInt8]) -> Void) {
            let threadRings = ThreadLogRings.current
            let index = threadRings.index(of: id) ?? addRing(to: threadRings)
            threadRings.entries[index].scratch.removeAll(keepingCapacity: true)
            encode(&threadRings.entries[index].scratch)
            threadRings.entries[index].scratch.append(UInt8(ascii: "\n"))
            let ring = threadRings.entries[index].ring
            let waiting = threadRings.entries[index].scratch.withUnsafeBytes { ring.append($0) }
            guard let waiting else {
                droppedTotal.add(1, ordering: .relaxed)
                return
            }
            if waiting >= wakeThreshold { signalWriter() }
        }

        private func addRing(to threadRings: ThreadLogRings) -> Int {
            let ring = LogRing(capacity: threadCapacity)
            rings.withLock { $0.append(ring) }
            var scratch: [UInt8] = []
            scratch.reserveCapacity(512)
            threadRings.entries.append(.init(sinkID: id, ring: ring, scratch: scratch))
            return threadRings.entries.count - 1
        }

        private func signalWriter() {
            // A plain load first: while a wake-up is pending, every line past the threshold would
            // otherwise write the flag's cache line that all I/O threads share.
            guard let wake, !wakePending.load(ordering: .relaxed),
                  !wakePending.exchange(true, ordering: .acquiringAndReleasing) else { return }
            wake.signal()
        }

        func drain() {
            writing.withLock { batch in
                wakePending.store(false, ordering: .releasing)
                // Access lines first: at a stop, the server's lines come before the application's
                // last words ("stopped").
                var dropped = 0
                var ownersGone = false
                for ring in rings.withLock({ $0 }) {
                    // Read before taking: once the owner is gone, what is taken is all there was.
                    let gone = ring.ownerGone.load(ordering: .acquiring)
                    dropped += ring.take(into: &batch)
                    if gone {
                        ring.sinkGone.store(true, ordering: .releasing)
                        ownersGone = true
                    }
                }
                if ownersGone { rings.withLock { $0.removeAll { $0.sinkGone.load(ordering: .relaxed) } } }
                let format = state.withLock { state in
                    batch.append(contentsOf: state.buffer)
                    state.buffer.removeAll(keepingCapacity: state.buffer.capacity <= 1 << 20)
                    dropped += state.dropped
                    state.dropped = 0
                    return state.format
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
