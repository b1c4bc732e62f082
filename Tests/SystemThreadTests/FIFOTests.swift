import SystemThread
import Testing

@Suite struct FIFOTests {
    @Test func firstInFirstOutAcrossTheCompaction() {
        var queue = FIFO<Int>()
        #expect(queue.popFirst() == nil)
        #expect(queue.isEmpty)
        // Never fully drained: taken slots are dropped every 1,024, order holds across it.
        var next = 0
        for value in 0..<5_000 {
            queue.append(value)
            if value.isMultiple(of: 2) {
                #expect(queue.popFirst() == next)
                next += 1
            }
        }
        #expect(queue.count == 5_000 - next)
        while let value = queue.popFirst() {
            #expect(value == next)
            next += 1
        }
        #expect(next == 5_000)
        #expect(queue.isEmpty)
        queue.append(7)
        #expect(queue.popFirst() == 7)
    }
}

@Suite struct BoundedJobQueueTests {
    @Test func refusesPastItsCapacityAndHandsOutInOrder() throws {
        let queue = BoundedJobQueue<Int>(capacity: 2)
        try queue.submit(1)
        try queue.submit(2)
        #expect(throws: BoundedJobQueue<Int>.Refusal.full) { try queue.submit(3) }
        #expect(queue.waitingCount == 2)
        #expect(queue.next() == 1)
        try queue.submit(3)
        queue.close()
        #expect(throws: BoundedJobQueue<Int>.Refusal.closed) { try queue.submit(4) }
        // Closed, the queued jobs are still handed out, then nil.
        #expect(queue.next() == 2)
        #expect(queue.next() == 3)
        #expect(queue.next() == nil)
    }
}
