import Synchronization

/// One thread's access-log lines on their way to the log writer: a single-producer,
/// single-consumer ring of bytes. The owning thread appends whole lines without a lock; the
/// writer (one at a time, under `LogSink`'s write lock) takes everything there in one go.
///
/// A line is copied in whole or not at all, so the writer never sees half of one; when the ring
/// is full the line is dropped and counted instead of waiting for the writer.
final class LogRing: @unchecked Sendable {
    let capacity: Int
    private let storage: UnsafeMutablePointer<UInt8>
    /// Bytes ever appended; stored by the producer only, published with release.
    private let head = Atomic<Int>(0)
    /// Bytes ever taken; stored by the consumer only.
    private let tail = Atomic<Int>(0)
    /// Lines refused since the consumer last looked.
    private let dropped = Atomic<Int>(0)
    /// The owning thread has ended: once taken empty, the ring is forgotten.
    let ownerGone = Atomic<Bool>(false)
    /// The sink has gone: the owning thread forgets its entry for it.
    let sinkGone = Atomic<Bool>(false)

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// Producer only. Returns the bytes now waiting, or nil when the line did not fit.
    func append(_ line: UnsafeRawBufferPointer) -> Int? {
        let start = head.load(ordering: .relaxed)
        let waiting = start - tail.load(ordering: .acquiring)
        guard waiting + line.count <= capacity else {
            dropped.add(1, ordering: .relaxed)
            return nil
        }
        let offset = start % capacity
        let first = min(line.count, capacity - offset)
        if let base = line.baseAddress {
            (storage + offset).update(from: base.assumingMemoryBound(to: UInt8.self), count: first)
            if first < line.count {
                storage.update(from: base.assumingMemoryBound(to: UInt8.self) + first, count: line.count - first)
            }
        }
        head.store(start + line.count, ordering: .releasing)
        return waiting + line.count
    }

    /// Consumer only. Appends every whole line waiting to `batch`; returns the lines dropped
    /// since the last call.
    func take(into batch: inout [UInt8]) -> Int {
        let start = tail.load(ordering: .relaxed)
        let end = head.load(ordering: .acquiring)
        if end > start {
            let offset = start % capacity
            let count = end - start
            let first = min(count, capacity - offset)
            batch.append(contentsOf: UnsafeBufferPointer(start: storage + offset, count: first))
            if first < count { batch.append(contentsOf: UnsafeBufferPointer(start: storage, count: count - first)) }
            tail.store(end, ordering: .releasing)
        }
        return dropped.exchange(0, ordering: .relaxed)
    }
}
