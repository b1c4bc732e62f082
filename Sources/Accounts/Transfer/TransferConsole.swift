import Synchronization

/// Where the transfer commands talk to the person running them: lines on stderr (failures,
/// the summary) and, only when stderr is a terminal, one progress line redrawn in place. The
/// CSV may be on stdout, so nothing else is ever written there.
public final class TransferConsole: Sendable {
    private let writeError: @Sendable (String) -> Void
    private let isTerminal: Bool
    private let monotonic: @Sendable () -> Double
    /// Whether a progress line is showing, and when it was last drawn.
    private let progress = Mutex<(showing: Bool, drawnAt: Double)>((false, -.infinity))

    /// - Parameters:
    ///   - writeError: writes text to stderr as given.
    ///   - isTerminal: whether stderr is a terminal (progress lines only then).
    public init(isTerminal: Bool, monotonic: @escaping @Sendable () -> Double, writeError: @escaping @Sendable (String) -> Void) {
        self.writeError = writeError
        self.isTerminal = isTerminal
        self.monotonic = monotonic
    }

    /// A line of its own, below any progress line.
    public func line(_ text: String) {
        let clear = progress.withLock { state -> Bool in
            defer { state.showing = false }
            return state.showing
        }
        writeError((clear ? "\r\u{1B}[K" : "") + text + "\n")
    }

    /// Redraws the progress line, at most ten times a second (`force` for the last one).
    package func progress(_ text: String, force: Bool = false) {
        guard isTerminal else { return }
        let now = monotonic()
        let draw = progress.withLock { state -> Bool in
            guard force || now - state.drawnAt >= 0.1 else { return false }
            state = (true, now)
            return true
        }
        if draw { writeError("\r\u{1B}[K" + text) }
    }

    /// Removes the progress line.
    package func clearProgress() {
        let showing = progress.withLock { state -> Bool in
            defer { state.showing = false }
            return state.showing
        }
        if showing { writeError("\r\u{1B}[K") }
    }
}
