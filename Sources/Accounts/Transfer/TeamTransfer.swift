import AppleClient
import Glibc
import Logging
import Store

/// `siwa-server transfer export | import | status` (docs/guides/team-transfer.md): carries the users across when
/// the app moves to another developer team, with Apple's `auth/usermigrationinfo` (APPLE.md
/// §8). Every user's progress is kept in the database (`team_transfers`), so a run stopped by
/// a crash or Ctrl-C is continued by the next; each call to Apple is paced, and Apple failing
/// or throttling slows the run down and asks again, losing nothing.
public final class TeamTransfer: Sendable {
    /// The sending team's call needs the receiving team's ID: ten upper-case letters and digits.
    package static func isTeamID(_ text: String) -> Bool {
        text.utf8.count == 10 && text.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x30...0x39).contains($0) }
    }

    public static let defaultRate = 10
    /// Users read from the database at a time.
    package static let pageSize = 200

    package let store: Store
    package let api: AppleAPI
    /// `team_id`: this team; an export must name another, an import happens for this one.
    package let teamID: String?
    /// The client id the migration calls name unless the command names one: the app being
    /// transferred. Its Services IDs move with it (APPLE.md §8), so the web client id is as
    /// good as any.
    package let defaultClientID: String?
    package let console: TransferConsole
    package let wall: @Sendable () -> Int64
    package let monotonic: @Sendable () -> Double
    /// Whether the person asked the run to stop (Ctrl-C): checked between users.
    package let stopRequested: @Sendable () -> Bool
    /// How the waits between calls are slept (tests move a clock instead).
    package let sleep: @Sendable (Double) async -> Void
    package let pacing: @Sendable (Int) -> TransferPacing

    /// Runs on an open store and Apple client; SiwaApp opens both from the configuration.
    package init(
        store: Store, api: AppleAPI, teamID: String?, defaultClientID: String?, console: TransferConsole,
        wall: @escaping @Sendable () -> Int64, monotonic: @escaping @Sendable () -> Double,
        stopRequested: @escaping @Sendable () -> Bool, sleep: @escaping @Sendable (Double) async -> Void,
        pacing: @escaping @Sendable (Int) -> TransferPacing
    ) {
        self.store = store
        self.api = api
        self.teamID = teamID
        self.defaultClientID = defaultClientID
        self.console = console
        self.wall = wall
        self.monotonic = monotonic
        self.stopRequested = stopRequested
        self.sleep = sleep
        self.pacing = pacing
    }

    public func close() { store.close() }

    // MARK: - Export (the sending team)

    /// Where the CSV goes.
    public enum Destination: Sendable {
        case standardOutput(@Sendable (String) -> Void)
        case file(String)
    }

    /// For every user not yet exported for `target`, asks Apple for the `transfer_sub` and
    /// records it; then writes every user exported for `target` as CSV (also after an
    /// interruption: what is done so far). `dryRun` counts and calls nothing.
    public func export(target: String, clientID: String?, destination: Destination, rate: Int, dryRun: Bool) async throws -> TransferSummary {
        guard Self.isTeamID(target) else {
            throw ConfigurationError(key: "--target", problem: "must be the receiving team's ID (ten upper-case letters and digits)")
        }
        // One peer sends its own team ID here; Apple refuses it for every user.
        guard target != teamID else {
            throw ConfigurationError(key: "--target", problem: "is this team (team_id); it must be the team receiving the app")
        }
        guard let clientID = clientID ?? defaultClientID else {
            throw ConfigurationError(key: "client_ids", problem: "required to name the app being transferred (or pass --client-id)")
        }
        let (users, exported, withoutAppleID) = try await store.transfers.exportProgress(target: target)
        var summary = TransferSummary()
        // Password accounts have no `sub` for Apple to transfer: skipped, as users already done.
        summary.skipped = exported + withoutAppleID
        let toAsk = max(0, users - exported - withoutAppleID)
        if dryRun {
            console.line(
                "transfer export --dry-run: \(users) users, \(exported) already exported for \(target), \(withoutAppleID) without an Apple ID (skipped), \(toAsk) to ask Apple about; nothing was sent")
            return summary
        }
        try await run("export", done: "exported", total: toAsk, rate: rate, summary: &summary) { after in
            try await self.store.transfers.pendingExports(target: target, after: after, limit: Self.pageSize).map { user in
                (user.userID, user.externalID, user)
            }
        } ask: { (user: TransferExportCandidate) async throws(AppleAPIError) -> String in
            try await self.api.transferSubject(forSub: user.appleSub, target: target, clientID: clientID)
        } record: { user, transferSub in
            switch try await self.store.transfers.recordExport(userID: user.userID, target: target, transferSub: transferSub, now: self.wall()) {
            case .recorded: return .done
            case .userGone: return .skipped
            case .transferSubTaken(let holder): return .failed("Apple gave a transfer_sub already recorded for user \(holder); not recorded")
            }
        } refused: { user, code in
            try await self.store.transfers.recordExportFailure(userID: user.userID, target: target, error: code, now: self.wall())
            return "Apple answered \(code) (the user may have revoked the app before the move, or is not a user of this team)"
        }
        let lines = try await store.transfers.exported(target: target)
        let written = try write(TransferCSV.render(lines), to: destination)
        var report = "transfer export: \(summary.done) exported, \(summary.skipped) skipped, \(summary.failed) failed "
        report += "(of \(users) users" + (withoutAppleID > 0 ? ", \(withoutAppleID) without an Apple ID); " : "); ")
        report += "\(lines.count) users in \(written)"
        console.line(report)
        explain(stop: summary.stop, command: "export")
        return summary
    }

    /// Writes the CSV; returns where, for the summary. A file is replaced whole (written aside,
    /// then renamed), readable by its owner only.
    private func write(_ csv: String, to destination: Destination) throws -> String {
        switch destination {
        case .standardOutput(let write):
            write(csv)
            return "the CSV on stdout"
        case .file(let path):
            try FileBytes.replace(path, with: Array(csv.utf8), mode: 0o600)
            return path
        }
    }

    // MARK: - Import (the receiving team)

    /// The file cannot be imported (unreadable, or not our CSV); nothing was changed.
    public struct UnusableFile: Error, CustomStringConvertible {
        public let description: String

        package init(description: String) {
            self.description = description
        }
    }

    /// `transfer import FILE`: the whole file is read and checked before anything changes.
    public func importFile(_ path: String, clientID: String?, rate: Int) async throws -> TransferSummary {
        // A million users is under 100 MB of CSV.
        guard let bytes = FileBytes.read(path, limit: 1 << 30) else { throw UnusableFile(description: "\(path): cannot be read") }
        let records: [TransferRecord]
        do {
            records = try TransferCSV.parse(bytes)
        } catch {
            throw UnusableFile(description: "\(path): \(error)")
        }
        return try await importRecords(records, clientID: clientID, rate: rate)
    }

    /// Records every row's `transfer_sub` (dropping the previous team's Apple tokens), then
    /// exchanges each at Apple for this team's `sub` and moves the user to it.
    public func importRecords(_ records: [TransferRecord], clientID: String?, rate: Int) async throws -> TransferSummary {
        guard let team = teamID else { throw ConfigurationError(key: "team_id", problem: "required to talk to Apple") }
        guard let clientID = clientID ?? defaultClientID else {
            throw ConfigurationError(key: "client_ids", problem: "required to name the app being transferred (or pass --client-id)")
        }
        // The sending team running the import on its own database by mistake would drop its
        // users' Apple tokens: the database says whom its users were exported for.
        let targets = try await store.transfers.exportTargets()
        if !targets.isEmpty, !targets.contains(team) {
            throw ConfigurationError(
                key: "team_id",
                problem: "is \(team), but this database's users were exported for \(targets.sorted().joined(separator: ", ")): run the import with the receiving team's configuration")
        }
        var summary = TransferSummary()
        let recorded = try await store.transfers.recordImports(records, team: team, now: wall())
        summary.skipped = recorded.alreadyImported
        summary.failed = recorded.unknown.count + recorded.conflicting.count
        for record in recorded.unknown {
            console.line("transfer import: \(Self.name(record.userID, record.externalID)): not in this database (neither the user id nor the external id matches)")
        }
        for (record, holder) in recorded.conflicting {
            console.line("transfer import: \(Self.name(record.userID, record.externalID)): its transfer_sub is already recorded for user \(holder)")
        }
        let total = try await store.transfers.pendingImportCount(team: team)
        try await run("import", done: "imported", total: total, rate: rate, summary: &summary) { after in
            try await self.store.transfers.pendingImports(team: team, after: after, limit: Self.pageSize).map { ($0.userID, $0.externalID, $0) }
        } ask: { (user: TransferRecord) async throws(AppleAPIError) -> MigratedUser in
            try await self.api.migratedUser(transferSubject: user.transferSub, clientID: clientID)
        } record: { user, migrated in
            let move = try await self.store.transfers.completeImport(
                userID: user.userID, transferSub: user.transferSub, newSub: migrated.sub,
                relayEmail: migrated.isPrivateEmail ? migrated.email : nil, now: self.wall())
            switch move {
            case .moved: return .done
            // Signed in with the new `sub` meanwhile (moved then), or deleted.
            case .alreadyMoved, .notPending: return .skipped
            case .subTaken(let holder):
                return .failed("Apple's sub for this user already belongs to user \(holder), who signed in as a new user before the import; nothing changed")
            }
        } refused: { user, code in
            try await self.store.transfers.recordImportFailure(userID: user.userID, error: code, now: self.wall())
            return "Apple answered \(code) (a transfer_sub Apple does not know for this team, a user who revoked the app before the move, or the 60-day window is over)"
        }
        let status = try await store.transfers.status()
        var report = "transfer import: \(summary.done) imported, \(summary.skipped) skipped, \(summary.failed) failed"
        if let started = status.windowStartedAt { report += "; " + Self.window(startedAt: started, now: wall(), status: status) }
        console.line(report)
        explain(stop: summary.stop, command: "import")
        return summary
    }

    // MARK: - Status

    /// `transfer status`: users, exported, imported, pending, failed, skipped (no Apple ID),
    /// and the days left of Apple's window counted from the first import.
    package static func status(of store: Store, now: Int64) async throws -> String {
        let status = try await store.transfers.status()
        let rows: [(String, String)] = [
            ("users", String(status.users)), ("exported", String(status.exported)), ("imported", String(status.imported)),
            ("pending", String(status.pending)), ("failed", String(status.failed)),
            ("skipped", "\(status.withoutAppleID) without an Apple ID (nothing to transfer)"),
            ("window", status.windowStartedAt.map { window(startedAt: $0, now: now, status: status) } ?? "not started (no import yet)"),
        ]
        return rows.map { $0.0.padding(to: 10) + $0.1 }.joined(separator: "\n")
    }

    /// Apple's 60 days, counted from the first import: what is left of them, or who was left
    /// behind when they are over.
    package static func window(startedAt: Int64, now: Int64, status: TransferStatus) -> String {
        let end = startedAt + 60 * 86_400
        if now < end {
            let days = (end - now + 86_399) / 86_400
            return "\(days) day\(days == 1 ? "" : "s") left of Apple's 60-day window (started \(RFC3339.format(startedAt)))"
        }
        let behind = status.pending + status.failed
        return "Apple's 60-day window closed \(RFC3339.format(end)); \(behind) user\(behind == 1 ? " was" : "s were") left behind (not imported)"
    }

    // MARK: - Runs

    /// What became of one user Apple answered for.
    package enum UserOutcome {
        case done
        /// Done meanwhile some other way (or gone).
        case skipped
        /// Not done; the reason, for the user's line on stderr.
        case failed(String)
    }

    /// Visits every user the pages list, in id order, asking Apple about each (`ask`, paced)
    /// and keeping the answer (`record`) or the refusal (`refused`, which returns the reason);
    /// counts into `summary`, one stderr line per failed user, a progress line on a terminal.
    /// Stops early when asked to, when Apple stays unavailable, or refuses our client.
    private func run<User: Sendable, Answer: Sendable>(
        _ command: String, done: String, total: Int, rate: Int, summary: inout TransferSummary,
        page: (_ after: String) async throws -> [(id: String, externalID: String?, user: User)],
        ask: (User) async throws(AppleAPIError) -> Answer,
        record: (User, Answer) async throws -> UserOutcome,
        refused: (User, String) async throws -> String
    ) async throws {
        var pacer = TransferPacer(pacing(rate))
        var after = ""
        var seen = 0
        defer { console.clearProgress() }
        while true {
            let users = try await page(after)
            guard let last = users.last else { return }
            after = last.id
            for (id, externalID, user) in users {
                if stopRequested() {
                    summary.stop = .interrupted
                    return
                }
                let outcome: UserOutcome
                switch await callApple(&pacer, { () async throws(AppleAPIError) -> Answer in try await ask(user) }) {
                case .value(let answer): outcome = try await record(user, answer)
                case .refused(let code): outcome = .failed(try await refused(user, code))
                case .stopped(let stop):
                    summary.stop = stop
                    if case .appleUnavailable(let reason) = stop {
                        console.line("transfer \(command): Apple is unavailable (\(reason)) after \(pacer.pacing.maximumTries) tries for \(Self.name(id, externalID)); stopping")
                    }
                    return
                }
                switch outcome {
                case .done: summary.done += 1
                case .skipped: summary.skipped += 1
                case .failed(let reason):
                    summary.failed += 1
                    console.line("transfer \(command): \(Self.name(id, externalID)): \(reason)")
                }
                seen += 1
                console.progress("transfer \(command): \(seen) of \(total): \(summary.done) \(done), \(summary.failed) failed, \(Self.pace(pacer))")
            }
        }
    }

    // MARK: - Calls to Apple

    package enum AppleAnswer<T: Sendable>: Sendable {
        case value(T)
        /// Apple refused this user (`invalid_request` and the like): a failure of this user only.
        case refused(String)
        case stopped(TransferSummary.Stop)
    }

    /// One user's call, paced; Apple unavailable or throttling slows the run and asks again,
    /// until the pacer gives up. Ctrl-C during a pause stops at once (the user stays to do).
    private func callApple<T: Sendable>(
        _ pacer: inout TransferPacer, _ body: () async throws(AppleAPIError) -> T
    ) async -> AppleAnswer<T> {
        while true {
            let delay = pacer.delayBeforeCall(now: monotonic())
            if delay > 0 { await sleep(delay) }
            do throws(AppleAPIError) {
                let value = try await body()
                pacer.succeeded()
                return .value(value)
            } catch {
                switch error {
                case .unavailable(let reason):
                    guard let backoff = pacer.failed() else { return .stopped(.appleUnavailable(reason)) }
                    if await pause(backoff) { return .stopped(.interrupted) }
                case .invalidClient: return .stopped(.clientRefused)
                case .invalidRequest: return .refused("invalid_request")
                case .invalidGrant: return .refused("invalid_grant")
                case .rejected(let code): return .refused(code)
                }
            }
        }
    }

    /// Sleeps `seconds` in short steps; true when asked to stop meanwhile.
    private func pause(_ seconds: Double) async -> Bool {
        var left = seconds
        while left > 0 {
            if stopRequested() { return true }
            let step = min(left, 0.05)
            await sleep(step)
            left -= step
        }
        return stopRequested()
    }

    private func explain(stop: TransferSummary.Stop?, command: String) {
        switch stop {
        case .interrupted?:
            console.line("transfer \(command): interrupted; what is done is kept: run the same command again to continue")
        case .appleUnavailable?:
            console.line("transfer \(command): stopped while Apple is unavailable; what is done is kept: run the same command again to continue")
        case .clientRefused?:
            console.line("transfer \(command): Apple refused our client authentication (invalid_client): check team_id, key_id, private_key and the client id")
        case nil:
            break
        }
    }

    /// A user as failure lines name them: the id, and the team's own id when there is one.
    package static func name(_ userID: String, _ externalID: String?) -> String {
        "user \(userID)" + (externalID.map { " (external_id \($0))" } ?? "")
    }

    private static func pace(_ pacer: TransferPacer) -> String {
        let rate = pacer.currentRate
        return rate >= 10 ? "\(Int(rate))/s" : "\(Double(Int(rate * 10)) / 10)/s"
    }
}

extension String {
    /// Padded with spaces to `width` characters (never cut).
    fileprivate func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
