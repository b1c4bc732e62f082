/// First in, first out, taking from the front in O(1): the queue a pool of threads takes its
/// jobs from. Taken slots are dropped in batches (when the queue empties, or every 1,024), so a
/// queue that never drains still stays bounded by what waits. Not synchronized: callers hold
/// their own lock.
public struct FIFO<Element> {
    private var elements: [Element] = []
    private var head = 0

    public init() {}

    public var count: Int { elements.count - head }
    public var isEmpty: Bool { head == elements.count }

    public mutating func append(_ element: Element) {
        elements.append(element)
    }

    public mutating func popFirst() -> Element? {
        guard head < elements.count else { return nil }
        let element = elements[head]
        head += 1
        if head == elements.count {
            elements.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 {
            elements.removeFirst(head)
            head = 0
        }
        return element
    }
}

extension FIFO: Sendable where Element: Sendable {}
