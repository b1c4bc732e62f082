import TLS

/// HTTPS (and loopback-only HTTP) for calls to Apple. Blocking socket work runs on the
/// client's own threads; callers suspend on a continuation, so request handlers awaiting a
/// slow Apple never hold one of Swift's cooperative threads.
public final class HTTPClient: Sendable {
    private let configuration: HTTPClientConfiguration
    private let pool: ConnectionPool
    private let workers: WorkerPool
    private let exchange: BlockingExchange

    public init(configuration: HTTPClientConfiguration = .init()) throws {
        self.configuration = configuration
        let tls = try TLSClientContext(
            extraCAPEM: configuration.extraCAPEM, extraCAFile: configuration.extraCAFile, trustOnlyExtraCAs: configuration.trustOnlyExtraCAs)
        pool = ConnectionPool(maxPerKey: configuration.maxIdleConnectionsPerHost, idleTimeout: configuration.idleTimeout)
        workers = WorkerPool(maxThreads: configuration.workerThreads)
        exchange = BlockingExchange(configuration: configuration, tls: tls, pool: pool)
    }

    deinit {
        workers.shutdown()
        pool.closeAll()
    }

    /// Sends a request and returns the whole response (any status).
    ///
    /// `idempotent: false` (a code exchange: a code is single use) means the request is never
    /// re-sent once any byte may have reached the server. An idempotent request that fails on a
    /// reused keep-alive connection before any response byte is retried once on a fresh one.
    public func send(_ request: HTTPClientRequest, idempotent: Bool) async throws(HTTPClientError) -> HTTPClientResponse {
        let deadline = Deadline.after(configuration.totalTimeout)
        let url = try RequestURL(request.url)
        let bytes = try RequestEncoder.encode(request, url: url)
        let isHead = request.method == "HEAD"
        let exchange = self.exchange
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<HTTPClientResponse, HTTPClientError>, Never>) in
            workers.submit {
                continuation.resume(returning: exchange.run(url: url, request: bytes, isHead: isHead, idempotent: idempotent, deadline: deadline))
            }
        }
        return try result.get()
    }
}
