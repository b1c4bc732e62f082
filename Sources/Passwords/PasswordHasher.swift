#if canImport(Glibc)
import Glibc
#endif
import COpenSSL
import OpenSSLCrypto
import Synchronization
import SystemThread

/// Hashes and verifies passwords on a pool of its own threads (docs/guides/passwords-and-email.md): at most `threads`
/// scrypt runs at once, so memory stays at `threads` × 32 MiB however many sign-ins arrive,
/// and the rest wait in a bounded queue; past it a caller is refused at once (`Busy`, answered
/// 503 `busy`). Never on an I/O thread, nor on Swift's cooperative pool, which runs handlers.
///
/// The bound counts hashes admitted and not yet finished (running or waiting), at most
/// `threads + queueCapacity`: a worker that finished a hash but has not yet taken the next one
/// (its low priority lets others run first) must not make a full queue refuse callers.
public final class PasswordHasher: Sendable {
    /// Every thread is hashing and `queueCapacity` hashes wait already.
    public struct Busy: Error, Sendable {}

    /// The outcome of checking a password against a stored hash.
    public struct Verification: Sendable, Equatable {
        public let matches: Bool
        /// The stored hash was made with other parameters than today's: hash the password
        /// again and store that (only meaningful when it matches).
        public let needsRehash: Bool
    }

    /// The threads' nice value: the lowest. A burst of sign-ins takes the CPU nobody else
    /// wants, and an I/O loop or a database thread that wakes wins the core at once (at nice 19
    /// a thread weighs 15 against a normal thread's 1024), so other routes keep their latency.
    static let niceValue: Int32 = 19

    public let parameters: ScryptParameters
    public let threads: Int
    private let queue: BoundedJobQueue<@Sendable () -> Void>
    private let workers: [Worker]
    /// Hashes admitted and not yet finished, and the most there may be.
    private let admitted = Mutex(0)
    private let maxAdmitted: Int
    private let stopped = Mutex(false)

    /// `queueCapacity` defaults to eight hashes per thread: at tens of milliseconds each, a
    /// caller at the back waits well under a second.
    public init(parameters: ScryptParameters = .current, threads: Int, queueCapacity: Int? = nil) throws {
        self.parameters = parameters
        self.threads = max(1, threads)
        let capacity = queueCapacity ?? 8 * self.threads
        maxAdmitted = self.threads + capacity
        let queue = BoundedJobQueue<@Sendable () -> Void>(capacity: maxAdmitted)
        self.queue = queue
        var workers: [Worker] = []
        do {
            for index in 0..<self.threads {
                workers.append(Worker(try SystemThread.start(name: "siwa-hash-\(index)") {
                    #if canImport(Glibc)
                    // Linux keeps the nice value per thread; 0 means this thread.
                    _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceValue)
                    #endif
                    while let job = queue.next() { job() }
                    // Frees OpenSSL's per-thread state now, not in a destructor racing exit.
                    OPENSSL_thread_stop()
                }))
            }
        } catch {
            queue.close()
            for worker in workers { worker.join() }
            throw error
        }
        self.workers = workers
    }

    /// A new PHC hash of `password` with today's parameters and a fresh salt.
    public func hash(_ password: String) async throws(Busy) -> String {
        let parameters = self.parameters
        return try await run { try Self.derive(password, parameters: parameters).description }
    }

    /// Checks `password` against `stored`. Costs one hash whatever `stored` is: nil (no such
    /// account) and an unreadable string are checked against a hash nothing matches, so the
    /// time taken says nothing of whether the account exists.
    public func verify(_ password: String, against stored: String?) async throws(Busy) -> Verification {
        let parameters = self.parameters
        return try await run { Self.verify(password, against: stored, parameters: parameters) }
    }

    /// Waits for the hashes under way and ends the threads; later calls are refused as `Busy`.
    public func stop() {
        queue.close()
        let alreadyStopped = stopped.withLock { stopped in
            defer { stopped = true }
            return stopped
        }
        guard !alreadyStopped else { return }
        for worker in workers { worker.join() }
    }

    deinit { stop() }

    // MARK: - The work itself (pure, on the calling thread)

    /// One hash on the calling thread (the pool's work; benchmarks call it directly).
    public static func derive(_ password: String, parameters: ScryptParameters, salt: [UInt8]? = nil) throws -> PasswordHash {
        let salt = salt ?? SecureRandom.bytes(ScryptParameters.saltBytes)
        let derived = try Scrypt.derive(
            password: password.utf8, salt: salt, logN: parameters.logN, r: parameters.r, p: parameters.p,
            length: ScryptParameters.hashBytes)
        return PasswordHash(parameters: parameters, salt: salt, hash: derived)
    }

    static func verify(_ password: String, against stored: String?, parameters: ScryptParameters) -> Verification {
        guard let stored, let expected = PasswordHash(stored) else {
            // The same work as a real check against today's parameters; the all-zero output is
            // one scrypt never gives (a 2^-256 chance), so this never matches.
            let decoy = PasswordHash(
                parameters: parameters, salt: [UInt8](repeating: 0, count: ScryptParameters.saltBytes),
                hash: [UInt8](repeating: 0, count: ScryptParameters.hashBytes))
            _ = matches(password, decoy)
            return Verification(matches: false, needsRehash: false)
        }
        let matched = matches(password, expected)
        return Verification(
            matches: matched,
            needsRehash: expected.parameters != parameters || expected.salt.count != ScryptParameters.saltBytes
                || expected.hash.count != ScryptParameters.hashBytes)
    }

    private static func matches(_ password: String, _ expected: PasswordHash) -> Bool {
        guard let derived = try? Scrypt.derive(
            password: password.utf8, salt: expected.salt, logN: expected.parameters.logN, r: expected.parameters.r,
            p: expected.parameters.p, length: expected.hash.count)
        else { return false }
        return ConstantTime.equals(derived, expected.hash)
    }

    // MARK: - The pool

    /// Runs `work` on the pool (internal: tests run their own work to watch the bound).
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws(Busy) -> T {
        let maxAdmitted = self.maxAdmitted
        let admittedNow = admitted.withLock { count -> Bool in
            guard count < maxAdmitted else { return false }
            count += 1
            return true
        }
        guard admittedNow else { throw Busy() }
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            do {
                try queue.submit { [self] in
                    let result = Result { try work() }
                    admitted.withLock { $0 -= 1 }
                    continuation.resume(returning: result)
                }
            } catch {
                admitted.withLock { $0 -= 1 }
                continuation.resume(returning: .failure(Busy()))
            }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error as Busy): throw error
        case .failure:
            // scrypt refused today's own parameters (out of memory): as unable to serve now.
            throw Busy()
        }
    }

    /// A joinable thread, wrapped so the pool can be Sendable.
    private final class Worker: @unchecked Sendable {
        // Sendable: set once at init, joined once by `stop`.
        let thread: pthread_t
        init(_ thread: pthread_t) { self.thread = thread }
        func join() { pthread_join(thread, nil) }
    }
}
