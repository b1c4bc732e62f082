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
