import Accounts
import ArgumentParser
import SiwaApp
import Store

/// `webhooks failed` and `webhooks retry ID|--all` (docs/guides/connecting-your-backend.md), on the configured database,
/// whether or not a server is running on it.
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks",
        abstract: "Webhook events the receiver did not accept within webhook_retention: list them, queue them again.",
        subcommands: [Failed.self, Retry.self]
    )

    struct Failed: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "failed",
            abstract: "List failed webhook events: id, type, user id, attempts, created, last error."
        )

        @OptionGroup var options: ConfigurationOptions

        func run() async throws {
            let configuration = options.load()
            let events = try await WebhooksCommand.onQueue(configuration, options: options, command: "webhooks failed") { try await $0.failed(limit: 100_000) }
            print(FailedWebhooksReport.text(events))
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Queue failed webhook events again: one by id, or every one with --all.",
            discussion: """
                A queued event is sent at once, before its user's later events. Its retention still \
                counts from its creation, so it is failed again if this attempt fails too.
                """
        )

        @OptionGroup var options: ConfigurationOptions

        @Argument(help: ArgumentHelp("The event's id (msg_…), as `webhooks failed` lists it.", valueName: "ID"))
        var id: String?

        @Flag(name: .customLong("all"), help: "Queue every failed event again.")
        var all = false

        func validate() throws {
            guard (id != nil) != all else { throw ValidationError("give one event id, or --all") }
        }

        func run() async throws {
            let configuration = options.load()
            let now = Clocks.system.wall()
            if let id {
                let queued = try await WebhooksCommand.onQueue(configuration, options: options, command: "webhooks retry") { try await $0.requeue(id: id, now: now) }
                guard queued else {
                    LoggingSetup.reportFatal(
                        "webhooks retry: no failed webhook event has the id \(id) (`siwa-server webhooks failed` lists them)",
                        format: configuration.logFormat)
                    throw ExitCode(1)
                }
                print("queued \(id) again")
            } else {
                let count = try await WebhooksCommand.onQueue(configuration, options: options, command: "webhooks retry") { try await $0.requeueAll(now: now) }
                print("queued \(count) failed event(s) again")
            }
            if configuration.webhookURL == nil {
                print("note: webhook_url is not set here; the events are sent by a server that has it")
            }
        }
    }

    /// Runs `body` on the configured database's webhook queue. A SQLite path with no database
    /// is a configuration error (exit 2, as for `users`); a database that fails ends the command
    /// with exit code 1; each with one line saying why.
    static func onQueue<T>(
        _ configuration: Configuration, options: ConfigurationOptions, command: String, _ body: (WebhookQueue) async throws -> T
    ) async throws -> T {
        do {
            return try await WebhookQueue.withQueue(at: configuration.database, body)
        } catch let error as MissingDatabase {
            options.fail(ConfigurationError(key: "database", problem: error.description))
        } catch {
            LoggingSetup.reportFatal("\(command): \(error) (database \(Store.redacted(configuration.database)))", format: configuration.logFormat)
            throw ExitCode(1)
        }
    }
}
