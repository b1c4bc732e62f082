#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The calling thread's rings, one per sink it has written access lines to, the scratch buffer
/// each line is encoded into, and its last timestamp: thread-local, so reaching them takes no lock.
final class ThreadLogRings {
    struct Entry {
        let sinkID: Int
        let ring: LogRing
        /// Reused for every line, so encoding one allocates nothing once it has grown.
        var scratch: [UInt8]
    }

    var entries: [Entry] = []
    /// The second `LogTimestamp` last stamped on this thread, and its `YYYY-MM-DDTHH:MM:SS`.
    var stampedSecond = Int.min
    var stampedDateTime = [UInt8](repeating: 0, count: 19)

    deinit {
        for entry in entries { entry.ring.ownerGone.store(true, ordering: .releasing) }
    }

    /// This thread's instance, made on first use and released when the thread ends.
    static var current: ThreadLogRings {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<ThreadLogRings>.fromOpaque(pointer).takeUnretainedValue()
        }
        let rings = ThreadLogRings()
        pthread_setspecific(key, Unmanaged.passRetained(rings).toOpaque())
        return rings
    }

    /// The index of `sinkID`'s entry; entries of sinks that have gone are forgotten on the way.
    func index(of sinkID: Int) -> Int? {
        if let index = entries.firstIndex(where: { $0.sinkID == sinkID }) { return index }
        entries.removeAll { $0.ring.sinkGone.load(ordering: .acquiring) }
        return nil
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key) { pointer in
            guard let pointer else { return }
            Unmanaged<ThreadLogRings>.fromOpaque(pointer).release()
        }
        precondition(status == 0, "pthread_key_create failed")
        return key
    }()
}
