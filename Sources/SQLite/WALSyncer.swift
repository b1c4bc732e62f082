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

/// Makes committed batches durable on a thread of its own, so the writer thread goes on with the
/// next batch during the fsync.
///
/// With `synchronous=FULL`, SQLite fsyncs the WAL inside COMMIT: the writer thread, the one
/// every write goes through, sat idle for that millisecond while the next batch waited. Instead
/// the writer connection commits with `synchronous=NORMAL` (SQLite then syncs the WAL only around
/// checkpoints, and still syncs a restarted WAL's header) and hands the batch's jobs here; this
/// thread fdatasyncs the WAL file and only then resumes their callers, so an awaited write is on
/// disk, as with FULL. One fsync covers every batch committed before it began, since they were
/// all written to the WAL by then. (FULL would also pad the WAL to a sector at each commit where
/// SQLite is built without POWERSAFE_OVERWRITE; `Database` keeps FULL itself on such a build.)
///
/// A committed batch is visible to other connections up to one fsync before it is durable. No
/// caller learns of a write before it is durable, and what is delivered (webhooks, mail, Apple
/// revocations) is first claimed by a write, which resumes only after a sync that covers
/// everything it read. Only look-ups may go out sooner, and change nothing at Apple: a refresh
/// token's re-validation, and the transfer command's `transfer_sub` queries.
///
/// A failed fsync is fatal to the database, as PostgreSQL makes it: the kernel may have dropped
/// the pages it could not write and report later fsyncs as done, so no later write could be
/// promised durable. The batches it covered and every write after it fail, and `ping()` says so.
final class WALSyncer: @unchecked Sendable {
    // Sendable by confinement: `pending` and `isStopping` are touched only while holding
    // `condition`; `thread` is written in init and read by `stop()`, which only the writer
    // thread calls; `descriptor` is used only by the syncer thread.
    private let condition = Condition()
    private var pending: [any WriteJob] = []
    private var isStopping = false
    private var thread: pthread_t?
    /// The WAL as SQLite names it: next to the database's real file, symlinks followed.
    let walPath: String
    private var descriptor: Int32 = -1
    /// fsyncs finished, so tests can see batches sharing one.
    private let syncs = Atomic<Int>(0)
    /// The failed sync that ended writing, once one did.
    private let fatal = Mutex<SQLiteError?>(nil)
    /// Runs on the syncer thread before each fsync: tests hold syncs back with it, or return an
    /// errno to stand for a failed fsync (0 syncs as usual).
    let beforeSync = Mutex<(@Sendable () -> Int32)?>(nil)

    init(walPath: String) throws {
        self.walPath = walPath
        do {
            thread = try SystemThread.start(name: "siwa-db-sync") { [self] in run() }
        } catch {
            throw SQLiteError.misuse("cannot start the database sync thread (\(error))")
        }
    }

    var syncCount: Int { syncs.load(ordering: .acquiring) }

    /// Why the database takes no more writes: a sync failed. nil while all is well.
    var failure: SQLiteError? { fatal.withLock { $0 } }

    /// Completes `jobs`, whose batch was committed, once the WAL holding it is on disk. Called
    /// by the writer thread after each COMMIT.
    func complete(afterSync jobs: some Sequence<any WriteJob>) {
        condition.withLock {
            pending.append(contentsOf: jobs)
            condition.signal()
        }
    }

    /// Syncs and completes what is pending, then ends the thread. Called by the writer thread
    /// once it took its last job, before it closes the connection.
    func stop() {
        condition.withLock {
            isStopping = true
            condition.signal()
        }
        if let thread { pthread_join(thread, nil) }
        thread = nil
    }

    private func run() {
        var jobs: [any WriteJob] = []
        while true {
            condition.lock()
            while pending.isEmpty && !isStopping { condition.wait() }
            if pending.isEmpty {
                condition.unlock()
                break
            }
            // Double buffering, as the writer's queue: a steady load allocates nothing.
            swap(&jobs, &pending)
            condition.unlock()
            let error = failure ?? sync()
            if let error { fatal.withLock { $0 = $0 ?? error } }
            for job in jobs { job.complete(batchError: error) }
            jobs.removeAll(keepingCapacity: true)
        }
        if descriptor >= 0 { close(descriptor) }
    }

    /// fdatasync of the WAL, as SQLite's own commit does with FULL; nil when it is on disk.
    private func sync() -> SQLiteError? {
        let injected = beforeSync.withLock { $0 }?() ?? 0
        if injected != 0 { return syncError(injected, "fsync of the WAL failed") }
        if descriptor < 0 {
            // The WAL exists from the first commit until the writer connection closes, after
            // this thread ends; it keeps one inode all along (a restart overwrites it). None yet:
            // nothing was committed (a job that wrote nothing), so nothing waits for the disk.
            let opened = open(walPath, O_RDWR | O_CLOEXEC)
            if opened < 0 && errno == ENOENT { return nil }
            guard opened >= 0 else { return syncError(errno, "cannot open the WAL to sync it") }
            // SQLite syncs the folder once after creating the WAL, at its first sync of it, which
            // with NORMAL waits for a checkpoint: the file's name must be on disk as well.
            if let error = syncFolder() {
                close(opened)
                return error
            }
            descriptor = opened
        }
        while Self.dataSync(descriptor) != 0 {
            if errno != EINTR { return syncError(errno, "fsync of the WAL failed") }
        }
        syncs.add(1, ordering: .releasing)
        return nil
    }

    private func syncFolder() -> SQLiteError? {
        let folder = walPath.lastIndex(of: "/").map { String(walPath[..<$0]) } ?? "."
        let handle = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_CLOEXEC)
        guard handle >= 0 else { return syncError(errno, "cannot open the database folder to sync it") }
        defer { close(handle) }
        while fsync(handle) != 0 {
            if errno != EINTR { return syncError(errno, "fsync of the database folder failed") }
        }
        return nil
    }

    private static func dataSync(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        fsync(descriptor)
        #else
        fdatasync(descriptor)
        #endif
    }

    private func syncError(_ code: Int32, _ what: String) -> SQLiteError {
        let message = "\(what): \(String(cString: strerror(code))); the database takes no more writes until the server restarts"
        return SQLiteError(code: SQLITE_IOERR, extendedCode: SQLiteError.ioErrorFsync, message: message)
    }
}
