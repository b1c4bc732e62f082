import Accounts
import ArgumentParser
import Glibc
import SiwaApp

/// `transfer export | import | status` (docs/guides/team-transfer.md): moving the app's users to another
/// developer team with Apple's user migration. A thin shell over `SiwaApp.TeamTransfer`.
struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Carry the users across when the app moves to another developer team (Apple's user migration).",
        discussion: """
            The sending team runs `transfer export --target TEAM_ID` and hands the CSV and the \
            database to the receiving team, which runs `transfer import FILE` with its own \
            configuration. Both are resumable: run the same command again after a crash or Ctrl-C.
            """,
        subcommands: [Export.self, Import.self, Status.self]
    )

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "export",
            abstract: "Get every user's transfer_sub for the receiving team and write user_id,external_id,transfer_sub as CSV.",
            discussion: """
                Run by the sending team, with its own configuration, before it transfers the app. \
                Users already exported for TEAM_ID, and users without an Apple ID (password \
                accounts: nothing to transfer), are skipped and counted. Exit 0 when no user failed, 1 when \
                some did (one line each on stderr), 2 for configuration errors, 130 when interrupted.
                """
        )

        @OptionGroup var options: ConfigurationOptions

        @Option(name: .customLong("target"), help: ArgumentHelp("The receiving team's ID.", valueName: "TEAM_ID"))
        var target: String

        @Option(name: .customLong("client-id"), help: "The app being transferred (default: web_client_id).")
        var clientID: String?

        @Option(name: .customLong("out"), help: "Write the CSV here (default: stdout).")
        var out: String?

        @Option(help: "At most this many calls to Apple a second.")
        var rate: Int = TeamTransfer.defaultRate

        @Flag(name: .customLong("dry-run"), help: "Count the users to export; call nothing, write nothing.")
        var dryRun = false

        func validate() throws { try TransferCommand.validate(rate: rate) }

        func run() async throws {
            let destination: TeamTransfer.Destination = out.map { .file($0) } ?? .standardOutput { text in
                LogSink.fileDescriptorWriter(1)(Array(text.utf8))
            }
            try await TransferCommand.run("export", options: options) { transfer in
                try await transfer.export(target: target, clientID: clientID, destination: destination, rate: rate, dryRun: dryRun)
            }
        }
    }

    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Record the CSV's transfer_subs, then move each user to this team's sub.",
            discussion: """
                Run by the receiving team, with its own configuration, on the database it received, \
                within 60 days of the transfer. Apple tokens issued to the previous team are dropped; \
                sessions and user ids stay. Exit codes as for export.
                """
        )

        @OptionGroup var options: ConfigurationOptions

        @Argument(help: "The CSV from `transfer export`.")
        var file: String

        @Option(name: .customLong("client-id"), help: "The app being transferred (default: web_client_id).")
        var clientID: String?

        @Option(help: "At most this many calls to Apple a second.")
        var rate: Int = TeamTransfer.defaultRate

        func validate() throws { try TransferCommand.validate(rate: rate) }

        func run() async throws {
            try await TransferCommand.run("import", options: options) { transfer in
                try await transfer.importFile(file, clientID: clientID, rate: rate)
            }
        }
    }

    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Users, exported, imported, pending, failed, skipped (no Apple ID), and the days left of Apple's 60-day window."
        )

        @OptionGroup var options: ConfigurationOptions

        func run() async throws {
            let configuration = options.load()
            let console = TransferCommand.console()
            do {
                print(try await TeamTransfer.status(configuration: configuration, console: console, now: Int64(time(nil))))
            } catch {
                console.line("transfer status: \(error)")
                throw ExitCode(1)
            }
        }
    }

    static func validate(rate: Int) throws {
        guard (1...100_000).contains(rate) else { throw ValidationError("--rate must be 1 to 100000 calls a second") }
    }

    /// Lines on stderr; a progress line too when stderr is a terminal.
    static func console() -> TransferConsole {
        TransferConsole(isTerminal: isatty(2) != 0, monotonic: Clocks.system.monotonic) { text in
            LogSink.fileDescriptorWriter(2)(Array(text.utf8))
        }
    }

    /// Export or import: the configuration (exit 2 naming a bad setting), Ctrl-C handling, the
    /// database and Apple client, then `body`, whose summary gives the exit code.
    static func run(_ command: String, options: ConfigurationOptions, _ body: (TeamTransfer) async throws -> TransferSummary) async throws {
        let configuration = options.load()
        let console = console()
        let interrupt = InterruptFlag.install(console: console)
        let transfer: TeamTransfer
        do {
            transfer = try TeamTransfer(configuration: configuration, console: console, stopRequested: { interrupt.isSet })
        } catch let error as ConfigurationError {
            options.fail(error)
        } catch {
            console.line("transfer \(command): cannot start: \(error)")
            throw ExitCode(1)
        }
        defer { transfer.close() }
        let summary = await running(command, options: options) { try await body(transfer) }
        if summary.exitCode != 0 { throw ExitCode(summary.exitCode) }
    }

    /// Runs a command's body: a configuration error exits 2 naming it, an unusable file 2,
    /// anything else (the database failing) 1, after one line saying what.
    static func running(_ command: String, options: ConfigurationOptions, _ body: () async throws -> TransferSummary) async -> TransferSummary {
        do {
            return try await body()
        } catch let error as ConfigurationError {
            options.fail(error)
        } catch let error as TeamTransfer.UnusableFile {
            LogSink.fileDescriptorWriter(2)(Array("transfer \(command): \(error); nothing was changed\n".utf8))
            Glibc.exit(2)
        } catch {
            LogSink.fileDescriptorWriter(2)(Array("transfer \(command): stopped: \(error); what is done is kept: run the same command again to continue\n".utf8))
            Glibc.exit(1)
        }
    }
}
