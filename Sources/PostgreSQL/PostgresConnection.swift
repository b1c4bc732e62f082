import CLibPQ
import Glibc

/// One libpq connection with its prepared-statement cache. Not thread-safe: it is used only by
/// the thread that holds it (a `PostgresPool` worker, the listener thread, or a command-line
/// tool). Every call blocks that thread until the server answers, so it must never be made on
/// Swift's cooperative pool or an I/O loop: `PostgresPool` is the way to use one from async code.
public final class PostgresConnection {
    /// Isolation for `transaction`. Under `repeatableRead` and `serializable` a transaction can
    /// fail with `isSerializationFailure` and should be retried whole.
    public enum IsolationLevel: Sendable {
        case readCommitted, repeatableRead, serializable
    }

    let handle: OpaquePointer
    private var statements: [StatementKey: PreparedStatement] = [:]
    private var preparedCount = 0
    /// A transaction's BEGIN not sent yet: it goes with the transaction's first statement.
    private var deferredBegin: String?
    /// Statements of the open transaction not sent yet (`runDeferred`): they go in one pipeline
    /// with the next statement that waits for its answer, or with COMMIT.
    private var deferred: [DeferredStatement] = []
    private(set) var isClosed = false
    /// The server announced it is ending this session (see the notice receiver in init).
    private var isEnding = false
    /// Exchanges with the server so far (a pipeline counts once), for tests and diagnostics:
    /// on a machine whose database shares the cores, each is a wait for the scheduler.
    private(set) var roundTrips = 0

    /// Applications use a fixed set of SQL strings; the cap only guards against a caller that
    /// builds SQL dynamically.
    static let statementCacheLimit = 512

    /// A statement is prepared once per SQL text and parameter types: the server infers the
    /// type of an untyped (text or NULL) parameter once, when preparing.
    private struct StatementKey: Hashable {
        let sql: String
        let types: [Oid]
    }

    private struct PreparedStatement {
        let name: String
        var columns: SQLColumns?
    }

    private struct DeferredStatement {
        let name: String
        let bound: PostgresParameters
        let sql: String
    }

    /// Connects, blocking until the server answers or `connectTimeout` passes.
    /// - Parameters:
    ///   - connectionString: a URL (`postgres://user:password@host:5432/name?sslmode=require`) or
    ///     libpq's `key=value` form; its settings win over the defaults below.
    ///   - connectTimeout: per host tried (libpq counts whole seconds, at least 2).
    ///   - applicationName: shown in `pg_stat_activity` unless the string sets its own.
    public convenience init(_ connectionString: String, connectTimeout: Duration = .seconds(5), applicationName: String? = nil) throws {
        try self.init(info: ConnectionInfo(connectionString), connectTimeout: connectTimeout, applicationName: applicationName)
    }

    init(info: ConnectionInfo, connectTimeout: Duration, applicationName: String?) throws(PostgresError) {
        let seconds = max(2, Int((connectTimeout + .milliseconds(999)).components.seconds))
        // Keywords are applied in order and a later one wins, so the defaults come before the
        // expanded connection string, and client_encoding after it: results are decoded as UTF-8.
        var settings: [(String, String)] = [
            ("connect_timeout", String(seconds)),
            // Notice a peer that vanished without closing (a dead host, a dropped route) in
            // about a minute, rather than never on an idle connection.
            ("keepalives", "1"), ("keepalives_idle", "30"), ("keepalives_interval", "10"), ("keepalives_count", "3"),
        ]
        if let applicationName { settings.append(("fallback_application_name", applicationName)) }
        settings.append(("dbname", info.text))
        settings.append(("client_encoding", "UTF8"))
        let handle = Self.connect(settings)
        guard let handle else {
            throw PostgresError(code: PostgresError.connectFailedCode, message: "out of memory")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = PostgresError.firstLine(PQerrorMessage(handle)) ?? "cannot connect"
            PQfinish(handle)
            throw PostgresError(code: PostgresError.connectFailedCode, message: info.redact(message))
        }
        self.handle = handle
        // libpq would print notices (a DROP … IF EXISTS that found nothing) on standard error;
        // errors reach callers through results instead. The one notice that matters is the
        // FATAL a server sends to an idle session before ending it (an administrator, a
        // shutdown): the connection is dead even before the end of file arrives.
        PQsetNoticeReceiver(handle, { context, result in
            guard let context, let result, let severity = PQresultErrorField(result, Int32(Unicode.Scalar("V").value)) else { return }
            let level = String(cString: severity)
            if level == "FATAL" || level == "PANIC" {
                Unmanaged<PostgresConnection>.fromOpaque(context).takeUnretainedValue().isEnding = true
            }
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    private static func connect(_ settings: [(String, String)]) -> OpaquePointer? {
        let keywords = settings.map { strdup($0.0) }
        let values = settings.map { strdup($0.1) }
        defer {
            keywords.forEach { free($0) }
            values.forEach { free($0) }
        }
        let keywordArray = keywords.map { UnsafePointer($0) } + [nil]
        let valueArray = values.map { UnsafePointer($0) } + [nil]
        return PQconnectdbParams(keywordArray, valueArray, 1)
    }

    deinit {
        close()
    }

    /// Closes the connection (a transaction left open is rolled back by the server). Later
    /// calls throw.
    public func close() {
        guard !isClosed else { return }
        isClosed = true
        statements.removeAll()
        deferred = []
        PQfinish(handle)
    }

    // MARK: - State

    /// False once the connection broke (the server went away, or ended this session) or was closed.
    public var isConnected: Bool {
        !isClosed && !isEnding && PQstatus(handle) == CONNECTION_OK
    }

    /// True inside BEGIN … COMMIT, including a transaction an error has aborted (and one whose
    /// BEGIN waits to go with its first statement).
    public var isInTransaction: Bool {
        guard !isClosed else { return false }
        if deferredBegin != nil { return true }
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// The server's process for this connection (what `pg_terminate_backend` takes).
    public var backendProcessID: Int32 {
        isClosed ? 0 : PQbackendPID(handle)
    }

    /// The server's version as a number: 150004 for 15.4.
    public var serverVersion: Int {
        isClosed ? 0 : Int(PQserverVersion(handle))
    }

    /// Whether the connection still looks usable, without a round trip: reads what the server
    /// sent while it sat idle (a FATAL when an administrator or a shutdown ended the session,
    /// then end of file). A pool checks this before handing the connection out, so a restart
    /// of the server costs no request an error.
    func isAliveWhileIdle() -> Bool {
        guard isConnected else { return false }
        let socket = PQsocket(handle)
        guard socket >= 0 else { return false }
        // The FATAL and the end of file may arrive in separate reads.
        for _ in 0..<4 {
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 0) > 0 else { break }
            if PQconsumeInput(handle) == 0 { return false }
            // Nobody listens on a pooled connection; drop what a caller's LISTEN left behind.
            while let notification = PQnotifies(handle) { PQfreemem(notification) }
        }
        return isConnected
    }

    // MARK: - Running SQL

    /// Runs one or more statements separated by semicolons, without parameters (schema,
    /// `SET`, `LISTEN`), in the simple query protocol; nothing is prepared or cached.
    public func execute(_ sql: String) throws {
        _ = try simpleQuery(sql)
    }

    /// Runs one statement and returns how many rows it inserted, updated or deleted (or selected).
    @discardableResult
    public func run(_ sql: String, _ parameters: [PostgresValue] = []) throws -> Int {
        try perform(sql, parameters).result.affectedRowCount
    }

    /// Runs one statement of the open transaction whose row count and error the caller does
    /// not wait for: it is sent in one pipeline with the transaction's next statement that
    /// waits for an answer, or with its COMMIT, saving a round trip. An error it meets aborts
    /// the transaction and is thrown by that later call (COMMIT then commits nothing).
    /// Outside a transaction it runs at once, as `run`.
    public func runDeferred(_ sql: String, _ parameters: [PostgresValue] = []) throws {
        guard isInTransaction else {
            try run(sql, parameters)
            return
        }
        try checkOpen(sql)
        let bound = try PostgresParameters(parameters, sql: sql)
        let name = try prepare(StatementKey(sql: sql, types: bound.types), bound)
        deferred.append(DeferredStatement(name: name, bound: bound, sql: sql))
    }

    /// Runs one statement and returns its rows. Parameters are `$1`, `$2`, … in `sql`.
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws -> [PostgresRow] {
        let (result, key) = try perform(sql, parameters)
        let (rows, columns) = result.rows(reusing: statements[key]?.columns)
        statements[key]?.columns = columns
        return rows
    }

    /// Runs `statements` in order in one round trip (libpq's pipeline mode, with whatever is
    /// deferred before them) and returns each one's rows. The first error is thrown; inside a
    /// transaction it aborts the transaction, and the statements after it did not run.
    public func queries(_ statements: [(sql: String, parameters: [PostgresValue])]) throws -> [[PostgresRow]] {
        guard let first = statements.first else { return [] }
        try checkOpen(first.sql)
        var pipelined: [Pipelined] = []
        var keys: [StatementKey] = []
        // Room for all of them first: a full cache emptied halfway would deallocate the names
        // of this pipeline's earlier statements before it is sent.
        if self.statements.count + statements.count > Self.statementCacheLimit { deallocateAll() }
        for statement in statements {
            let bound = try PostgresParameters(statement.parameters, sql: statement.sql)
            let key = StatementKey(sql: statement.sql, types: bound.types)
            pipelined.append(Pipelined(name: try prepare(key, bound), bound: bound, sql: statement.sql))
            keys.append(key)
        }
        let checked: [QueryResult]
        do throws(PostgresError) {
            checked = try checkInOrder(Array(zip(try sendDeferred(then: pipelined), statements.map(\.sql))))
        } catch {
            // As in `perform`: a statement the server no longer knows is prepared again next time.
            if Self.invalidatesStatement(error), let failed = keys.first(where: { $0.sql == error.sql }) { self.statements[failed] = nil }
            throw error
        }
        return zip(checked, keys).map { result, key in
            let (rows, columns) = result.rows(reusing: self.statements[key]?.columns)
            self.statements[key]?.columns = columns
            return rows
        }
    }

    /// The first row, or `nil`. The server still produces every row: add `LIMIT 1` when
    /// more than one may match.
    public func queryOne(_ sql: String, _ parameters: [PostgresValue] = []) throws -> PostgresRow? {
        try query(sql, parameters).first
    }

    /// The last statement's result.
    func simpleQuery(_ sql: String) throws(PostgresError) -> QueryResult {
        guard let last = try simpleQueryResults(sql).last else {
            throw PostgresError(code: "XX000", message: "the server sent no result", sql: sql)
        }
        return last
    }

    /// The result of every statement in `sql`, in order. An error in one statement skips the
    /// rest; it is what this throws.
    func simpleQueryResults(_ sql: String) throws(PostgresError) -> [QueryResult] {
        try checkOpen(sql)
        // The simple protocol cannot join a pipeline: what waits goes first, on its own.
        if !deferred.isEmpty { try sendDeferred() }
        var text = sql
        if let begin = deferredBegin {
            // One simple-query message may hold several statements: the BEGIN goes first.
            deferredBegin = nil
            text = begin + "; " + sql
        }
        roundTrips += 1
        guard PQsendQuery(handle, text) == 1 else { throw PostgresError(result: nil, connection: handle, sql: sql) }
        var results: [QueryResult] = []
        var failure: PostgresError?
        // Every result must be read, even after an error, before the connection takes another query.
        while let result = PQgetResult(handle) {
            guard failure == nil else {
                PQclear(result)
                continue
            }
            do {
                results.append(try check(result, sql: sql))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return results
    }

    /// Prepares `sql` once for these parameter types (`PQprepare`), then runs it with the
    /// values bound (`PQexecPrepared`): one round trip per call after the first.
    private func perform(_ sql: String, _ parameters: [PostgresValue]) throws(PostgresError) -> (result: QueryResult, key: StatementKey) {
        try checkOpen(sql)
        let bound = try PostgresParameters(parameters, sql: sql)
        let key = StatementKey(sql: sql, types: bound.types)
        var retried = false
        while true {
            let name = try prepare(key, bound)
            let result: OpaquePointer?
            if deferredBegin != nil || !deferred.isEmpty {
                result = try sendDeferred(then: [Pipelined(name: name, bound: bound, sql: sql)]).first ?? nil
            } else {
                roundTrips += 1
                result = bound.withArrays { values, lengths, formats in
                    PQexecPrepared(handle, name, Int32(bound.count), values, lengths, formats, 0)
                }
            }
            do {
                return (try check(result, sql: sql), key)
            } catch {
                guard Self.invalidatesStatement(error) else { throw error }
                // The schema changed under the statement (a `SELECT *` over an altered table),
                // or something deallocated it: prepare again. Outside a transaction nothing ran
                // and the retry is safe; inside one the transaction is aborted already.
                statements[key] = nil
                guard !retried, PQtransactionStatus(handle) == PQTRANS_IDLE else { throw error }
                retried = true
            }
        }
    }

    /// A statement sent last in a pipeline: its name and values, or plain SQL without
    /// parameters (COMMIT, and the SELECT that carries a notification).
    private struct Pipelined {
        var name: String?
        var bound: PostgresParameters?
        var sql: String
    }

    /// Sends, in one round trip through libpq's pipeline mode, the deferred BEGIN, the deferred
    /// statements and then `tail`, and one sync (an explicit transaction block stays open across
    /// it). Throws the first error among the deferred BEGIN and statements; returns `tail`'s
    /// results, in order, for the caller to check.
    @discardableResult
    private func sendDeferred(then tail: [Pipelined] = []) throws(PostgresError) -> [OpaquePointer?] {
        let begin = deferredBegin
        let queued = deferred
        deferredBegin = nil
        deferred = []
        guard PQenterPipelineMode(handle) == 1 else {
            // Not in a state to pipeline: the same statements one round trip each.
            roundTrips += (begin == nil ? 0 : 1) + queued.count + tail.count
            if let begin { _ = try check(PQexec(handle, begin), sql: begin) }
            for statement in queued { _ = try check(Self.exec(handle, statement.name, statement.bound), sql: statement.sql) }
            return tail.map { Self.exec(handle, $0) }
        }
        roundTrips += 1
        var sent = true
        if let begin { sent = sent && PQsendQueryParams(handle, begin, 0, nil, nil, nil, nil, 0) == 1 }
        for statement in queued where sent { sent = Self.send(handle, statement.name, statement.bound) }
        for statement in tail where sent { sent = Self.send(handle, statement) }
        sent = sent && PQpipelineSync(handle) == 1
        var opened: OpaquePointer?
        var results: [OpaquePointer?] = []
        if sent {
            // Each query's results end with a null; then comes the sync.
            if begin != nil { opened = takeResults() }
            results = (0..<(queued.count + tail.count)).map { _ in takeResults() }
            while let result = PQgetResult(handle) {
                let status = PQresultStatus(result)
                PQclear(result)
                if status == PGRES_PIPELINE_SYNC { break }
            }
        }
        if PQexitPipelineMode(handle) != 1 {
            // Results still pending (a send that failed half-way): no later call could run on
            // this connection, so it counts as lost and the pool opens another.
            isEnding = true
        }
        guard sent else {
            PQclear(opened)
            results.forEach { PQclear($0) }
            throw PostgresError(result: nil, connection: handle, sql: begin ?? queued.first?.sql ?? tail.first?.sql)
        }
        var leading: [(OpaquePointer?, String)] = begin.map { [(opened, $0)] } ?? []
        leading += zip(results, queued.map(\.sql))
        let rest = Array(results.dropFirst(queued.count))
        do {
            _ = try checkInOrder(leading)
        } catch {
            rest.forEach { PQclear($0) }
            throw error
        }
        return rest
    }

    /// Checks pipelined results in order: the first error wins and is thrown; what follows it
    /// was aborted with the pipeline and is cleared.
    private func checkInOrder(_ results: [(OpaquePointer?, String)]) throws(PostgresError) -> [QueryResult] {
        var checked: [QueryResult] = []
        var failure: PostgresError?
        for (result, sql) in results {
            guard failure == nil else {
                PQclear(result)
                continue
            }
            do {
                checked.append(try check(result, sql: sql))
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return checked
    }

    private static func exec(_ handle: OpaquePointer, _ name: String, _ bound: PostgresParameters) -> OpaquePointer? {
        bound.withArrays { values, lengths, formats in
            PQexecPrepared(handle, name, Int32(bound.count), values, lengths, formats, 0)
        }
    }

    private static func exec(_ handle: OpaquePointer, _ statement: Pipelined) -> OpaquePointer? {
        if let name = statement.name, let bound = statement.bound { return exec(handle, name, bound) }
        return PQexecParams(handle, statement.sql, 0, nil, nil, nil, nil, 0)
    }

    private static func send(_ handle: OpaquePointer, _ name: String, _ bound: PostgresParameters) -> Bool {
        bound.withArrays { values, lengths, formats in
            PQsendQueryPrepared(handle, name, Int32(bound.count), values, lengths, formats, 0)
        } == 1
    }

    private static func send(_ handle: OpaquePointer, _ statement: Pipelined) -> Bool {
        if let name = statement.name, let bound = statement.bound { return send(handle, name, bound) }
        return PQsendQueryParams(handle, statement.sql, 0, nil, nil, nil, nil, 0) == 1
    }

    /// The first of the current query's results (the rest cleared), reading up to its null.
    private func takeResults() -> OpaquePointer? {
        let first = PQgetResult(handle)
        guard first != nil else { return nil }
        while let more = PQgetResult(handle) { PQclear(more) }
        return first
    }

    private static func invalidatesStatement(_ error: PostgresError) -> Bool {
        // 0A000 "cached plan must not change result type"; 26000 "prepared statement … does not exist".
        error.code == "26000" || (error.code == "0A000" && error.message.contains("cached plan"))
    }

    private func prepare(_ key: StatementKey, _ bound: PostgresParameters) throws(PostgresError) -> String {
        if let prepared = statements[key] { return prepared.name }
        if statements.count >= Self.statementCacheLimit { deallocateAll() }
        preparedCount += 1
        let name = "siwa_\(preparedCount)"
        roundTrips += 1
        let result = key.types.withUnsafeBufferPointer { types in
            PQprepare(handle, name, key.sql, Int32(types.count), types.baseAddress)
        }
        _ = try check(result, sql: key.sql)
        statements[key] = PreparedStatement(name: name, columns: nil)
        return name
    }

    /// Empties the statement cache, on the server too. Outside an aborted transaction only;
    /// otherwise the names just accumulate until then. What is deferred is sent first.
    private func deallocateAll() {
        if PQtransactionStatus(handle) != PQTRANS_INERROR, (try? simpleQuery("DEALLOCATE ALL")) != nil {
            statements.removeAll()
        }
    }

    /// The result when it succeeded; otherwise clears it and throws its error.
    private func check(_ result: OpaquePointer?, sql: String) throws(PostgresError) -> QueryResult {
        if let result {
            let status = PQresultStatus(result)
            if status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY {
                return QueryResult(result)
            }
        }
        let error = PostgresError(result: result, connection: handle, sql: sql)
        PQclear(result)
        throw error
    }

    /// How many prepared statements the cache holds (for tests and diagnostics).
    var cachedStatementCount: Int { statements.count }

    private func checkOpen(_ sql: String) throws(PostgresError) {
        if isClosed { throw PostgresError(code: PostgresError.closedCode, message: "connection is closed", sql: sql) }
    }

    // MARK: - Transactions

    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws.
    /// Inside an open transaction this nests as a savepoint instead.
    @discardableResult
    public func transaction<T>(_ isolation: IsolationLevel = .readCommitted, _ body: (PostgresConnection) throws -> T) throws -> T {
        try transaction(isolation, body, notifyingAtCommit: nil)
    }

    /// A notification sent with a transaction's COMMIT (see `transaction(_:_:notifyingAtCommit:notified:)`).
    public struct CommitNotification: Sendable {
        public var channel: String
        public var payload: String
        /// An SQL condition the server evaluates in the transaction, just before COMMIT: the
        /// notification is sent only when it holds. Nil: always.
        public var condition: String?

        public init(channel: String, payload: String, condition: String? = nil) {
            self.channel = channel
            self.payload = payload
            self.condition = condition
        }
    }

    /// As `transaction(_:_:)`; once `body` has succeeded, `notifyingAtCommit` may name a
    /// notification that goes in the COMMIT's own message (one round trip, not a transaction of
    /// its own after it). Being part of the transaction, it is delivered at commit, after every
    /// notification the transaction's statements sent, and never if the transaction rolls back.
    /// Once the COMMIT has succeeded, `notified` learns whether the notification was sent (its
    /// condition held); it is not called when there was none, or the COMMIT failed.
    public func transaction<T>(
        _ isolation: IsolationLevel, _ body: (PostgresConnection) throws -> T, notifyingAtCommit: (() -> CommitNotification?)?,
        notified: ((Bool) -> Void)? = nil
    ) throws -> T {
        if isInTransaction {
            // A savepoint has no COMMIT of its own to carry the notification.
            guard notifyingAtCommit == nil else {
                throw PostgresError(code: "25001", message: "a notification sent with COMMIT needs a transaction of its own, not a savepoint")
            }
            return try savepoint(body)
        }
        // Sent with the first statement (see `execute(_:_:openingWith:)`), not on its own.
        switch isolation {
        case .readCommitted: deferredBegin = "BEGIN"
        case .repeatableRead: deferredBegin = "BEGIN ISOLATION LEVEL REPEATABLE READ"
        case .serializable: deferredBegin = "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
        do {
            let result = try body(self)
            if let notification = notifyingAtCommit?() {
                // pg_notify takes values; the simple query protocol that runs both statements
                // in one message takes no parameters, so they are quoted as literals. The
                // SELECT's one row, or none, says whether the condition held.
                let condition = notification.condition.map { " WHERE " + $0 } ?? ""
                let select = "SELECT pg_notify(\(try quotedLiteral(notification.channel)), \(try quotedLiteral(notification.payload)))\(condition)"
                // (Committed first: `notified?(…)` would not evaluate its argument without a callback.)
                let selected = deferred.isEmpty
                    // Its result comes last before COMMIT's (a deferred BEGIN's comes first).
                    ? try commit(select + "; COMMIT").last
                    : try commitPipelined(after: select)
                notified?(selected?.rowCount == 1)
            } else if deferredBegin != nil && deferred.isEmpty {
                // The body sent nothing: there is nothing to commit.
                deferredBegin = nil
            } else if deferred.isEmpty {
                try commit("COMMIT")
            } else {
                try commitPipelined(after: nil)
            }
            return result
        } catch {
            // Never sent, and undone with the transaction anyway.
            deferred = []
            if deferredBegin != nil {
                deferredBegin = nil  // nothing reached the server
            } else if isInTransaction {
                _ = try? execute("ROLLBACK")
            }
            throw error
        }
    }

    /// Runs `body` in a savepoint: its changes are kept when it returns and undone alone when it
    /// throws, leaving the enclosing transaction open (and usable again after an error).
    @discardableResult
    public func savepoint<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        // One fixed name nests correctly: ROLLBACK TO and RELEASE act on the innermost one.
        try execute("SAVEPOINT siwa")
        do {
            let result = try body(self)
            try execute("RELEASE SAVEPOINT siwa")
            return result
        } catch {
            // Queued after SAVEPOINT (which sent what waited before it): undone with it.
            deferred = []
            if isInTransaction { _ = try? execute("ROLLBACK TO SAVEPOINT siwa; RELEASE SAVEPOINT siwa") }
            throw error
        }
    }

    /// COMMIT sent with the deferred statements in one pipeline, after `select` (the statement
    /// carrying a notification) when there is one; returns `select`'s result.
    @discardableResult
    private func commitPipelined(after select: String?) throws -> QueryResult? {
        let tail = (select.map { [Pipelined(sql: $0)] } ?? []) + [Pipelined(sql: "COMMIT")]
        let checked = try checkInOrder(Array(zip(try sendDeferred(then: tail), tail.map(\.sql))))
        if checked.last?.commandTag == "ROLLBACK" {
            throw PostgresError(code: "25P02", message: "the transaction was aborted by an earlier error and rolled back", sql: "COMMIT")
        }
        return select == nil ? nil : checked.first
    }

    /// `sql` ends with COMMIT, whose tag is the last result's; returns the results before it.
    @discardableResult
    private func commit(_ sql: String) throws -> [QueryResult] {
        var results = try simpleQueryResults(sql)
        // COMMIT of a transaction an error aborted (one the body caught and carried on from)
        // "succeeds" with the tag ROLLBACK: nothing was kept, and the caller must know.
        if results.popLast()?.commandTag == "ROLLBACK" {
            throw PostgresError(code: "25P02", message: "the transaction was aborted by an earlier error and rolled back", sql: "COMMIT")
        }
        return results
    }

    // MARK: - Identifiers

    /// `text` quoted as an SQL string literal, for SQL that takes no parameters.
    func quotedLiteral(_ text: String) throws(PostgresError) -> String {
        guard let quoted = PQescapeLiteral(handle, text, text.utf8.count) else {
            throw PostgresError(code: "22021", message: PostgresError.firstLine(PQerrorMessage(handle)) ?? "invalid literal")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }

    /// `name` quoted as an SQL identifier (for LISTEN, which takes no parameters).
    func quotedIdentifier(_ name: String) throws(PostgresError) -> String {
        guard let quoted = PQescapeIdentifier(handle, name, name.utf8.count) else {
            throw PostgresError(code: "42602", message: PostgresError.firstLine(PQerrorMessage(handle)) ?? "invalid identifier")
        }
        defer { PQfreemem(quoted) }
        return String(cString: quoted)
    }
}
