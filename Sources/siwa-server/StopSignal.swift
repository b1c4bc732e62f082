import Dispatch
import Glibc

/// Waits for SIGTERM or SIGINT. The signals are blocked from their default action and
/// delivered through dispatch sources, so the stop runs as ordinary code, not in a handler.
enum StopSignal {
    static func next() async -> String {
        await withCheckedContinuation { continuation in
            let queue = DispatchQueue(label: "siwa.signals")
            let once = Once()
            var sources: [any DispatchSourceSignal] = []
            for (number, name) in [(SIGTERM, "SIGTERM"), (SIGINT, "SIGINT")] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
                source.setEventHandler {
                    if once.claim() { continuation.resume(returning: name) }
                }
                source.resume()
                sources.append(source)
            }
            // The sources must outlive this scope; they live as long as the process.
            Retained.sources = sources
        }
    }

    private final class Once: @unchecked Sendable {
        // Only touched on the serial signal queue.
        private var done = false
        func claim() -> Bool {
            if done { return false }
            done = true
            return true
        }
    }

    private enum Retained {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    }
}
