import ArgumentParser
import SiwaApp
import Store

/// `copy-database --to URL` (docs/guides/postgresql.md): the configured SQLite database into an empty
/// PostgreSQL database, for moving to several instances.
struct CopyDatabaseCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy-database",
        abstract: "Copy the configured SQLite database into an empty PostgreSQL database."
    )

    @OptionGroup var options: ConfigurationOptions

    @Option(name: .customLong("to"), help: "The PostgreSQL URL to copy into (postgres://…); its database must be empty.")
    var target: String

    func run() throws {
        let configuration = options.load()
        do {
            let copied = try Store.copy(fromSQLite: configuration.database, toPostgres: target)
            for (table, rows) in copied { print("copied \(rows) row(s) of \(table)") }
            print("copied \(configuration.database) into \(Store.redacted(target)); now set database to that URL, and data_key to the key this server seals with (its data_key, or the data.key file beside the SQLite database)")
        } catch {
            LoggingSetup.reportFatal("copy-database failed: \(error)", format: configuration.logFormat)
            throw ExitCode(1)
        }
    }
}
