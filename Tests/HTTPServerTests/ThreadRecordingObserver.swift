import Glibc
import HTTPServer
import Synchronization

/// Records each response's request id with the thread the observer heard of it on.
final class ThreadRecordingObserver: HTTPServerObserver {
    private let storage = Mutex<[(requestID: String, thread: UInt)]>([])
    var records: [(requestID: String, thread: UInt)] { storage.withLock { $0 } }
    func requestCompleted(_ record: AccessRecord) {
        let thread = UInt(pthread_self())
        storage.withLock { $0.append((record.requestID, thread)) }
    }
}
