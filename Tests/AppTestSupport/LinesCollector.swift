import Foundation

/// Collects the lines a `LogSink` writes.
public final class LinesCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""

    public init() {}

    public func append(_ bytes: [UInt8]) {
        lock.lock()
        text += String(decoding: bytes, as: UTF8.self)
        lock.unlock()
    }

    public var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return text.split(separator: "\n").map(String.init)
    }
}
