import Accounts
import Dispatch
import Glibc
import SiwaApp
import Synchronization

/// Ctrl-C (or SIGTERM) during a transfer: the first asks the run to stop after the current
/// user, with everything done kept; a second ends the process at once (each user's change is
/// its own transaction, so nothing is left half-done either way). Delivered through dispatch
/// sources, so the handlers are ordinary code.
final class InterruptFlag: Sendable {
    private let signals = Atomic<Int>(0)

    var isSet: Bool { signals.load(ordering: .acquiring) > 0 }

    static func install(console: TransferConsole) -> InterruptFlag {
        let flag = InterruptFlag()
        let queue = DispatchQueue(label: "siwa.transfer.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler {
                if flag.signals.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue == 1 {
                    console.line("stopping after the current user (Ctrl-C again to stop at once)")
                } else {
                    _exit(130)
                }
            }
            source.resume()
            sources.append(source)
        }
        Retained.sources = sources
        return flag
    }

    /// The sources must live as long as the process.
    private enum Retained {
        nonisolated(unsafe) static var sources: [any DispatchSourceSignal] = []
    }
}
