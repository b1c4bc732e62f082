import ArgumentParser
import SiwaApp

/// `siwa-server events` (docs/reference/command-line.md): the audit trail on the configured database.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "List the audit trail's events, newest first, on the configured database.",
        discussion: """
            The events GET /admin/events lists: sign-ins, account changes, sessions ended, Apple's \
            notifications, operators' actions. --type matches a prefix (sign_in. gives both sign-in \
            types). Exit 0 when done, 1 when the database fails, 2 on a configuration error.
            """)

    @OptionGroup var options: UsersCommand.Options
    @Option(name: .customLong("user"), help: "Only this user's events (usr_…).") var user: String?
    @Option(help: "Only types starting with this (sign_in., session.ended).") var type: String?
    @Option(help: "Only events since a duration ago (30m, 12h, 7d) or an RFC 3339 time.") var since: String?
    @Option(help: "How many events, 1 to 200.") var limit = 50

    func validate() throws {
        if let problem = UserAdministration.problem(eventLimit: limit, since: since) { throw ValidationError(problem) }
    }

    func run() async throws {
        try await options.run { try await $0.events(userID: user, typePrefix: type, since: since, limit: limit) }
    }
}
