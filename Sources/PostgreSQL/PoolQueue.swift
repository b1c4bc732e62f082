import SystemThread

/// The jobs waiting for a pool worker: first in, first out, at most `capacity` of them, so that
/// an overloaded or unreachable database turns callers away at once instead of piling them up.
final class PoolQueue: Sendable {
    private let queue: BoundedJobQueue<any PoolJob>

    init(capacity: Int) {
        queue = BoundedJobQueue(capacity: capacity)
    }

    var capacity: Int { queue.capacity }

    func submit(_ job: any PoolJob) throws(PostgresError) {
        do throws(BoundedJobQueue<any PoolJob>.Refusal) {
            try queue.submit(job)
        } catch {
            switch error {
            case .closed:
                throw PostgresError.closed("the PostgreSQL pool")
            case .full:
                throw PostgresError(
                    code: PostgresError.poolExhaustedCode,
                    message: "every PostgreSQL connection is busy and \(capacity) calls wait already"
                )
            }
        }
    }

    /// The next job, waiting for one; nil once closed and drained (the worker then exits).
    func next() -> (any PoolJob)? { queue.next() }

    /// Refuses new jobs; the queued ones are still handed out.
    func close() { queue.close() }

    var waitingCount: Int { queue.waitingCount }
}
