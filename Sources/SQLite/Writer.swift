#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite
import Synchronization
import SystemThread

/// Owns the database's only write connection and the one thread that uses it.
///
/// Group commit: the thread takes every job queued so far and runs up to `batchLimit` of them
/// in one `BEGIN IMMEDIATE … COMMIT`, each in its own savepoint, so one fsync covers the whole
/// batch while a failing job still undoes only itself. Callers resume only once their batch is
/// durable: after COMMIT returned, or with a `WALSyncer` after its fsync of the WAL, which runs
/// while this thread goes on with the next batch.
final class Writer: @unchecked Sendable {
    // Sendable by confinement:
    // - `queue` and `isStopping` are only touched while holding `condition`;
    // - `connection`, `dataVersion`, `lastForeignCommitCheck`, `nextCheckpointAt` and
    //   `mustFinishCheckpoint` are used only by the writer thread (the WAL hook runs on it
    //   too), which also closes the connection on the way out;
    // - `thread` is written once in init, before any job can be submitted.
    private let condition = Condition()
    private var queue: [any WriteJob] = []
    private var isStopping = false
    private let connection: Connection
    /// Rows the current transaction changed in tracked tables, reported once it ends.
    private let changes: RowChangeTracker.Collector?
    private let path: String
    private var thread: pthread_t?
    /// Transactions committed by batches, so tests can see writes being grouped.
    private let commits = Atomic<Int>(0)

    /// Bounds how long the first caller of a batch waits behind the others.
    static let batchLimit = 256

    /// How often the writer asks SQLite whether another process committed (the update hook
    /// sees only this connection's changes), so caches of tracked rows drop what the command
    /// line changed within this bound.
    static let foreignCommitCheckMilliseconds = 250
    /// `PRAGMA data_version` when last asked; it moves only when another connection commits.
    private var dataVersion: Int64?
    /// Checks finished, so a test can wait for one that began after something it did.
    private let foreignCommitChecks = Atomic<Int>(0)
    private var lastForeignCommitCheck = ContinuousClock.now

    /// Frames added to the WAL between two checkpoint passes: SQLite's own default.
    static let framesPerCheckpoint = 1_000
    /// WAL size (in frames of a page) at which the writer finishes the checkpoint itself, so
    /// the WAL starts over: 16 MiB of 4 KiB pages.
    static let walFrameLimit = 4_096
    let checkpointer: Checkpointer
    /// Syncs the WAL after commits and resumes their callers (with `synchronous=FULL`); nil
    /// when COMMIT itself is as durable as the database was asked to be.
    let syncer: WALSyncer?
    /// Checkpoints the writer ran itself (the WAL reached its limit, or no pass could start).
    private let ownCheckpoints = Atomic<Int>(0)
    /// WAL frames at which the next pass is asked for.
    private var nextCheckpointAt = Writer.framesPerCheckpoint
    /// The WAL reached `walFrameLimit` (or no pass can run): checkpoint after this batch.
    private var mustFinishCheckpoint = false

    init(connection: Connection, path: String, tracker: RowChangeTracker?, checkpointer: Checkpointer, syncer: WALSyncer?) throws {
        self.connection = connection
        self.path = path
        self.checkpointer = checkpointer
        self.syncer = syncer
        changes = tracker.map(RowChangeTracker.Collector.init)
        changes?.install(on: connection)
        installWALHook()
        thread = try Self.start(self)
    }

    /// Queues a job; throws once `stop()` has begun.
    func submit(_ job: any WriteJob) throws {
        if let failure = syncer?.failure { throw failure }
        try condition.withLock {
            if isStopping { throw SQLiteError.closed(path) }
            queue.append(job)
            condition.signal()
        }
    }

    var commitCount: Int { commits.load(ordering: .relaxed) }

    var ownCheckpointCount: Int { ownCheckpoints.load(ordering: .relaxed) }

    var foreignCommitCheckCount: Int { foreignCommitChecks.load(ordering: .acquiring) }

    /// Jobs waiting for the writer thread (not counting the batch it is running).
    var queuedCount: Int { condition.withLock { queue.count } }

    /// False once `stop()` has begun.
    var isAccepting: Bool { condition.withLock { !isStopping } }

    /// True on the writer thread, where waiting for the writer would wait forever.
    var isCurrentThread: Bool {
        guard let thread else { return false }
        return pthread_equal(pthread_self(), thread) != 0
    }

    /// Refuses new jobs; the thread finishes the queued ones, checkpoints, closes the connection
    /// and exits. Waits for all that, except on the writer thread itself (`close()` from inside
    /// a write, or the last reference to the database dropped there), which cannot wait for
    /// itself and lets the thread wind down once the current batch is done.
    func stop() {
        let first = condition.withLock {
            let first = !isStopping
            isStopping = true
            condition.signal()
            return first
        }
        guard first, let thread else { return }
        if isCurrentThread {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    // MARK: - The writer thread

    private func run() {
        var jobs: [any WriteJob] = []
        checkForeignCommits()
        while true {
            condition.lock()
            while queue.isEmpty && !isStopping {
                if changes == nil {
                    condition.wait()
                } else if !condition.wait(milliseconds: Self.foreignCommitCheckMilliseconds) {
                    condition.unlock()
                    checkForeignCommits()
                    condition.lock()
                }
            }
            if queue.isEmpty {
                condition.unlock()
                break
            }
            // Double buffering: the two arrays trade storage, so a steady load allocates nothing.
            swap(&jobs, &queue)
            condition.unlock()
            process(jobs)
            jobs.removeAll(keepingCapacity: true)
            if mustFinishCheckpoint {
                // After the batch was handed over: only the next batch waits for it.
                mustFinishCheckpoint = !connection.checkpointPassively()
                ownCheckpoints.add(1, ordering: .relaxed)
            }
            // A writer that is never idle looks too.
            if ContinuousClock.now - lastForeignCommitCheck >= .milliseconds(Self.foreignCommitCheckMilliseconds) { checkForeignCommits() }
        }
        // The last batches' callers resume once they are on disk, before the WAL is emptied.
        syncer?.stop()
        // TRUNCATE leaves an empty -wal file, so a copied or backed-up database file is whole.
        checkpointer.stop()
        try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        connection.close()
    }

    /// Tells the tracker when another connection committed since the last look: SQLite's
    /// `data_version` of this connection moves only then (never for its own commits), and the
    /// server's readers never write, so that connection is another process's.
    private func checkForeignCommits() {
        guard let changes else { return }
        lastForeignCommitCheck = ContinuousClock.now
        defer { foreignCommitChecks.add(1, ordering: .releasing) }
        guard let version = try? connection.queryOne("PRAGMA data_version")?.int64(0) else { return }
        if let dataVersion, dataVersion != version { changes.tracker.recordUnknownChanges() }
        dataVersion = version
    }

    private func process(_ jobs: [any WriteJob]) {
        if let failure = syncer?.failure {
            // Nothing committed now could be promised durable.
            for job in jobs { job.complete(batchError: failure) }
            return
        }
        var start = 0
        while start < jobs.count {
            if jobs[start].isExclusive {
                runExclusive(jobs[start])
                start += 1
                continue
            }
            var end = start
            while end < jobs.count, end - start < Self.batchLimit, !jobs[end].isExclusive {
                end += 1
            }
            var next = start
            while next < end {
                next = runTransaction(jobs[next..<end])
            }
            start = end
        }
    }

    /// Runs `jobs` in one transaction. Returns where the next transaction should start: the end,
    /// or just past a job during which SQLite lost the transaction.
    private func runTransaction(_ jobs: ArraySlice<any WriteJob>) -> Int {
        do {
            try connection.run("BEGIN IMMEDIATE")
        } catch {
            for job in jobs { job.complete(batchError: error) }
            return jobs.endIndex
        }
        for index in jobs.indices {
            jobs[index].perform(on: connection)
            if !connection.isInTransaction {
                // SQLite rolls the whole transaction back on some errors (a full disk, I/O
                // errors), or the body ended it itself: nothing done in it so far is durable.
                let cause = jobs[index].failure
                    ?? SQLiteError.misuse("a write body ended the batch transaction; use savepoint instead")
                changes?.flush()
                for job in jobs[...index] { job.complete(batchError: cause) }
                return index + 1
            }
        }
        do {
            try connection.run("COMMIT")
        } catch {
            if connection.isInTransaction { _ = try? connection.run("ROLLBACK") }
            changes?.flush()
            for job in jobs { job.complete(batchError: error) }
            return jobs.endIndex
        }
        commits.add(1, ordering: .relaxed)
        // Callers resume only after caches of the rows they changed know of it.
        changes?.flush()
        if let syncer {
            syncer.complete(afterSync: jobs)
        } else {
            for job in jobs { job.complete(batchError: nil) }
        }
        return jobs.endIndex
    }

    private func runExclusive(_ job: any WriteJob) {
        job.perform(on: connection)
        var error: (any Error)?
        if connection.isInTransaction {
            // Never let one job's open transaction swallow the next batch.
            _ = try? connection.run("ROLLBACK")
            error = SQLiteError.misuse("writeWithoutTransaction body left a transaction open")
        }
        changes?.flush()
        // What it committed waits for the sync; a transaction it left open was rolled back.
        if let syncer, error == nil {
            syncer.complete(afterSync: CollectionOfOne(job))
        } else {
            job.complete(batchError: error)
        }
    }

    // MARK: - Checkpoints

    /// Replaces SQLite's automatic checkpoint (which runs in the committing thread) with passes
    /// on the `Checkpointer`'s thread. The hook runs on the writer thread after each commit.
    private func installWALHook() {
        sqlite3_wal_hook(connection.handle, { context, _, _, frames in
            guard let context else { return SQLITE_OK }
            Unmanaged<Writer>.fromOpaque(context).takeUnretainedValue().walGrew(to: Int(frames))
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private func walGrew(to frames: Int) {
        if frames < nextCheckpointAt - Self.framesPerCheckpoint {
            // The WAL started over.
            nextCheckpointAt = Self.framesPerCheckpoint
        }
        if frames >= Self.walFrameLimit {
            mustFinishCheckpoint = true
        } else if frames >= nextCheckpointAt {
            nextCheckpointAt = frames + Self.framesPerCheckpoint
            if !checkpointer.request() { mustFinishCheckpoint = true }
        }
    }

    // MARK: - Thread start

    private static func start(_ writer: Writer) throws -> pthread_t {
        do {
            return try SystemThread.start(name: "siwa-db-writer") { writer.run() }
        } catch {
            throw SQLiteError.misuse("cannot start the database writer thread (\(error))")
        }
    }
}
