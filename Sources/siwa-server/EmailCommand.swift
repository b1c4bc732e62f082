import Accounts
import ArgumentParser
import SiwaApp
import Store

/// `email failed`, `email retry ID|--all` and `email test --to ADDRESS` (docs/guides/passwords-and-email.md); the first
/// two on the configured database, whether or not a server is running on it.
struct EmailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "email",
        abstract: "Mail the SMTP server did not accept: list it, queue it again; or send a test message.",
        subcommands: [Failed.self, Retry.self, Test.self]
    )

    struct Failed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "failed",
            abstract: "List failed messages: id, kind, recipient, attempts, created, last error."
        )

        @OptionGroup var options: ConfigurationOptions

        func run() async throws {
            let configuration = options.load()
            let messages = try await EmailCommand.onQueue(configuration, options: options, command: "email failed") { try await $0.failed(limit: 100_000) }
            print(FailedMailReport.text(messages))
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Queue failed messages again: one by id, or every one with --all.",
            discussion: """
                A queued message is sent at once. Its retention still counts from its creation, so it \
                is failed again if this attempt fails too.
                """
        )

        @OptionGroup var options: ConfigurationOptions

        @Argument(help: ArgumentHelp("The message's id (mail_…), as `email failed` lists it.", valueName: "ID"))
        var id: String?

        @Flag(name: .customLong("all"), help: "Queue every failed message again.")
        var all = false

        func validate() throws {
            guard (id != nil) != all else { throw ValidationError("give one message id, or --all") }
        }

        func run() async throws {
            let configuration = options.load()
            let now = Clocks.system.wall()
            if let id {
                let queued = try await EmailCommand.onQueue(configuration, options: options, command: "email retry") { try await $0.requeue(id: id, now: now) }
                guard queued else {
                    LoggingSetup.reportFatal(
                        "email retry: no failed message has the id \(id) (`siwa-server email failed` lists them)", format: configuration.logFormat)
                    throw ExitCode(1)
                }
                print("queued \(id) again")
            } else {
                let count = try await EmailCommand.onQueue(configuration, options: options, command: "email retry") { try await $0.requeueAll(now: now) }
                print("queued \(count) failed message(s) again")
            }
            if configuration.smtpURL == nil {
                print("note: smtp_url is not set here; the messages are sent by a server that has it")
            }
        }
    }

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test",
            abstract: "Send one test message now through smtp_url (exit 0 when the server accepted it)."
        )

        @OptionGroup var options: ConfigurationOptions

        @Option(name: .customLong("to"), help: ArgumentHelp("Where to send it.", valueName: "ADDRESS"))
        var to: String

        func run() async throws {
            let configuration = options.load()
            guard configuration.smtpURL != nil else {
                options.fail(ConfigurationError(key: "smtp_url", problem: "is required by `email test` (no mail is sent without it)"))
            }
            do {
                let answer = try await MailTest.send(configuration: configuration, to: to, now: Clocks.system.wall())
                print("sent: the SMTP server answered \(answer)")
            } catch {
                LoggingSetup.reportFatal("email test: \(error)", format: configuration.logFormat)
                throw ExitCode(1)
            }
        }
    }

    /// Runs `body` on the configured database's mail queue, as `WebhooksCommand.onQueue` does
    /// for webhooks: a SQLite path with no database is a configuration error (exit 2); a
    /// database that fails ends the command with exit code 1.
    static func onQueue<T>(
        _ configuration: Configuration, options: ConfigurationOptions, command: String, _ body: (MailQueue) async throws -> T
    ) async throws -> T {
        do {
            return try await MailQueue.withQueue(at: configuration.database, body)
        } catch let error as MissingDatabase {
            options.fail(ConfigurationError(key: "database", problem: error.description))
        } catch {
            LoggingSetup.reportFatal("\(command): \(error) (database \(Store.redacted(configuration.database)))", format: configuration.logFormat)
            throw ExitCode(1)
        }
    }
}
