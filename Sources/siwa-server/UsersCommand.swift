import Accounts
import ArgumentParser
import Logging
import SiwaApp

/// `siwa-server users …` (docs/guides/connecting-your-backend.md): the admin API's operations on the configured database.
struct UsersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "users",
        abstract: "Find, show, delete users, end their sessions and set their external id, on the configured database.",
        discussion: """
            The same operations as the admin API (/admin/users), on either database engine. Changes \
            emit the same webhook events when webhook_url is set. Exit 0 when done, 1 when the user \
            does not exist or the external id belongs to another user, 2 on a configuration error.
            """,
        subcommands: [List.self, Show.self, Delete.self, EndSessions.self, SetExternalID.self]
    )

    /// `--config` and `--json`, and the run every subcommand shares.
    struct Options: ParsableArguments {
        @OptionGroup var configuration: ConfigurationOptions

        @Flag(help: "Print the admin API's JSON instead of text.")
        var json = false

        /// Opens the database, runs `operation`, prints its outcome and ends with its exit code.
        func run(_ operation: (UserAdministration) async throws -> UserAdministration.Outcome) async throws {
            let settings = configuration.load()
            // Warnings (a data key file created) go to stderr: stdout is the command's output.
            let sink = LogSink(format: settings.logFormat, drainsInBackground: false, writer: LogSink.fileDescriptorWriter(2))
            defer { sink.flush() }
            let logger = Logger(label: "siwa") { label in
                switch settings.logFormat {
                case .json: JSONLogHandler(label: label, level: .warning, sink: sink)
                case .text: TextLogHandler(label: label, level: .warning, sink: sink)
                }
            }
            let administration: UserAdministration
            do {
                administration = try UserAdministration.open(settings, json: json, logger: logger)
            } catch let error as ConfigurationError {
                sink.flush()
                configuration.fail(error)
            } catch {
                LoggingSetup.reportFatal("\(error)", format: settings.logFormat)
                throw ExitCode(1)
            }
            defer { administration.close() }
            let outcome: UserAdministration.Outcome
            do {
                outcome = try await operation(administration)
            } catch {
                LoggingSetup.reportFatal("users: \(error)", format: settings.logFormat)
                throw ExitCode(1)
            }
            if outcome.exitCode == 0 {
                print(outcome.text)
            } else {
                LoggingSetup.reportFatal(outcome.text, format: settings.logFormat)
                throw ExitCode(outcome.exitCode)
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List users in id order, a page at a time; every filter given must match exactly.")

        @OptionGroup var options: Options
        @Option(help: "Only the user with this email.") var email: String?
        @Option(name: .customLong("apple-sub"), help: "Only the user with this Apple sub.") var appleSub: String?
        @Option(name: .customLong("external-id"), help: "Only the user with this external id.") var externalID: String?
        @Option(help: "Users per page, 1 to 200.") var limit = 50
        @Option(help: "Where the previous page ended (printed after it).") var cursor: String?

        func validate() throws {
            if let problem = UserAdministration.problem(limit: limit, cursor: cursor) { throw ValidationError(problem) }
        }

        func run() async throws {
            try await options.run { try await $0.list(email: email, appleSub: appleSub, externalID: externalID, limit: limit, cursor: cursor) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a user and the sessions that still work.")

        @OptionGroup var options: Options
        @Argument(help: "The user id (usr_…).") var id: String

        func run() async throws {
            try await options.run { try await $0.show(id: id) }
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete a user as DELETE /admin/users/{id} does.",
            discussion: """
                Its sessions end at once and user.deleted (reason admin) is emitted. The revocation of \
                its Apple token is queued in the database: a running siwa-server on the same database \
                sends it to Apple and retries until Apple accepts.
                """)

        @OptionGroup var options: Options
        @Argument(help: "The user id (usr_…).") var id: String

        func run() async throws {
            try await options.run { try await $0.delete(id: id) }
        }
    }

    struct EndSessions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end-sessions", abstract: "End every session of a user (a running server refuses them within a second).")

        @OptionGroup var options: Options
        @Argument(help: "The user id (usr_…).") var id: String

        func run() async throws {
            try await options.run { try await $0.endSessions(id: id) }
        }
    }

    struct SetExternalID: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-external-id", abstract: "Set the team's own id for a user (unique), or clear it with --clear.")

        @OptionGroup var options: Options
        @Argument(help: "The user id (usr_…).") var id: String
        @Argument(help: "The external id: 1 to 256 bytes of UTF-8, no control characters.") var value: String?
        @Flag(help: "Clear the external id instead of setting one.") var clear = false

        func validate() throws {
            switch (value, clear) {
            case (nil, false): throw ValidationError("give the external id, or --clear")
            case (.some, true): throw ValidationError("give the external id or --clear, not both")
            case (let value?, false): if let problem = UserAdministration.problem(externalID: value) { throw ValidationError(problem) }
            case (nil, true): break
            }
        }

        func run() async throws {
            try await options.run { try await $0.setExternalID(id: id, value: clear ? nil : value) }
        }
    }
}
