import ArgumentParser
// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SiwaApp
import Store

struct MigrateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Apply pending database migrations and exit."
    )

    @OptionGroup var options: ConfigurationOptions

    func run() throws {
        let configuration = options.load()
        do {
            let applied = try Store.migrate(path: configuration.database)
            if applied.isEmpty {
                print("database \(Store.redacted(configuration.database)) is up to date (schema version \(Schema.version))")
            } else {
                for migration in applied { print("applied \(migration.version) \(migration.name)") }
                print("database \(Store.redacted(configuration.database)) is at schema version \(Schema.version)")
            }
        } catch {
            LoggingSetup.reportFatal("migrate failed: \(error)", format: configuration.logFormat)
            throw ExitCode(1)
        }
    }
}
