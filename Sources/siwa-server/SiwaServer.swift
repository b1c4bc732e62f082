import ArgumentParser

/// The command line of docs/reference/command-line.md. Each command is a thin shell over `SiwaApp`.
@main
struct SiwaServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "siwa-server",
        abstract: "The server side of Sign in with Apple: sign-in, sessions, notifications and token upkeep.",
        subcommands: [
            ServeCommand.self, DemoCommand.self, MigrateCommand.self, CheckConfigCommand.self, DoctorCommand.self, ClientSecretCommand.self,
            VerifyTokenCommand.self, AppleSimCommand.self, CopyDatabaseCommand.self, UsersCommand.self, WebhooksCommand.self, EmailCommand.self,
            RotateSigningKeyCommand.self, TransferCommand.self, EventsCommand.self,
        ]
    )
}
