import Logging
import Synchronization

/// What every loop of one server shares: read-only after start, except `loopExited`.
final class ServerContext: Sendable {
    let responder: any HTTPResponder
    let configuration: HTTPServerConfiguration
    /// Where requests with large bodies run, so the loops stay free for the rest.
    let background: BackgroundExecutor
    let logger: Logger
    private let onAllLoopsExited: @Sendable () -> Void
    private let runningLoops: Atomic<Int>
    private let openConnections = Mutex(OpenConnections())
    /// `limits.bufferedBodyBudget`, drawn on by every connection.
    let bodyBudget: BodyBudget

    init(
        responder: any HTTPResponder, configuration: HTTPServerConfiguration, background: BackgroundExecutor, logger: Logger,
        loops: Int, onAllLoopsExited: @escaping @Sendable () -> Void
    ) {
        self.responder = responder
        self.configuration = configuration
        self.background = background
        self.logger = logger
        self.runningLoops = Atomic(loops)
        self.onAllLoopsExited = onAllLoopsExited
        self.bodyBudget = BodyBudget(bytes: configuration.limits.bufferedBodyBudget)
    }

    /// Whom a peer's connections count against for the per-client cap; nil for a peer exempt
    /// from it.
    func capKey(for address: String) -> ClientKey? {
        configuration.isExemptFromAddressCap(address) ? nil : ClientKey(address: address)
    }

    /// Counts a new connection, or refuses it when it would pass `maxConnections` or the
    /// per-client cap. Once per connection, so one lock shared by the loops costs nothing.
    func admitConnection(countedAs client: ClientKey?) -> Bool {
        openConnections.withLock { $0.admit(client, limits: configuration.limits) }
    }

    func connectionEnded(countedAs client: ClientKey?) {
        openConnections.withLock { $0.end(client) }
    }

    var openConnectionCount: Int { openConnections.withLock { $0.total } }

    func loopExited() {
        if runningLoops.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { onAllLoopsExited() }
    }
}
