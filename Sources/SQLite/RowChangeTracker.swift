import CSQLite
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Tells a cache of rows whether they may have changed since they were read. The writer
/// connection reports every row it inserts, updates or deletes in the tracked tables (SQLite's
/// update hook, so no write path can forget); after each transaction those rows' version slots
/// are bumped. A cache keeps the slot versions it saw and trusts an entry only while they hold.
///
/// Another process's commits (the command line ending sessions) are not reported row by row:
/// the writer notices them by SQLite's `data_version` within a quarter of a second and every
/// slot is bumped.
///
/// Slots are shared by rowid modulo `slotCount`, so an unrelated change can invalidate an entry
/// (a needless re-read) but a change never goes unnoticed. Rows of a transaction that rolled
/// back are bumped too, for the same reason.
///
/// A reader takes `sequence` before its query and asks for `versions(of:unchangedSince:)` after
/// it: a transaction that committed in between (bumps then increments `sequence`) makes that
/// nil, so a row read before a commit is never cached as current after it.
public final class RowChangeTracker: Sendable {
    public struct Row: Sendable, Hashable {
        /// Index into `tables`.
        public let table: Int
        public let rowid: Int64

        public init(table: Int, rowid: Int64) {
            self.table = table
            self.rowid = rowid
        }
    }

    private struct State {
        var sequence: UInt64 = 0
        var slots: [UInt64]
    }

    static let slotCount = 4096
    public let tables: [String]
    private let state: Mutex<State>

    public init(tables: [String]) {
        self.tables = tables
        state = Mutex(State(slots: Array(repeating: 0, count: tables.count * Self.slotCount)))
    }

    private static func slot(_ row: Row) -> Int {
        // Fibonacci hashing spreads consecutive rowids over the slots.
        row.table * slotCount + Int(truncatingIfNeeded: (UInt64(bitPattern: row.rowid) &* 0x9E37_79B9_7F4A_7C15) >> 52)
    }

    /// Committed write transactions so far.
    public var sequence: UInt64 { state.withLock { $0.sequence } }

    /// The rows' current versions, or nil when a transaction committed since `sequence`.
    public func versions(of rows: [Row], unchangedSince sequence: UInt64) -> [UInt64]? {
        state.withLock { state in
            guard state.sequence == sequence else { return nil }
            return rows.map { state.slots[Self.slot($0)] }
        }
    }

    /// Whether none of `rows` changed since their `versions` were taken.
    public func isCurrent(_ rows: [Row], versions: [UInt64]) -> Bool {
        state.withLock { state in
            zip(rows, versions).allSatisfy { state.slots[Self.slot($0)] == $1 }
        }
    }

    /// Called by the writer after a transaction (committed or not) that touched `rows`.
    func record(_ rows: [Row]) {
        guard !rows.isEmpty else { return }
        state.withLock { state in
            for row in rows { state.slots[Self.slot(row)] &+= 1 }
            state.sequence &+= 1
        }
    }

    /// Another connection (another process: the command line) committed, and which rows it
    /// changed is unknown: every entry cached so far is stale.
    func recordUnknownChanges() {
        state.withLock { state in
            for index in state.slots.indices { state.slots[index] &+= 1 }
            state.sequence &+= 1
        }
    }

    /// Collects what the writer connection changes; used only on the writer thread.
    final class Collector {
        let tracker: RowChangeTracker
        private let names: [[CChar]]
        var pending: [Row] = []

        init(tracker: RowChangeTracker) {
            self.tracker = tracker
            names = tracker.tables.map { Array($0.utf8CString) }
        }

        func changed(table name: UnsafePointer<CChar>, rowid: Int64) {
            for (index, tracked) in names.enumerated() where strcmp(name, tracked) == 0 {
                pending.append(Row(table: index, rowid: rowid))
                return
            }
        }

        func flush() {
            tracker.record(pending)
            pending.removeAll(keepingCapacity: true)
        }

        /// Installs the update hook on `connection`; the collector must outlive it.
        func install(on connection: Connection) {
            sqlite3_update_hook(connection.handle, { context, _, _, table, rowid in
                guard let context, let table else { return }
                Unmanaged<Collector>.fromOpaque(context).takeUnretainedValue().changed(table: table, rowid: rowid)
            }, Unmanaged.passUnretained(self).toOpaque())
        }
    }
}
