import Accounts
import ArgumentParser
// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import SiwaApp

/// `--config FILE`, shared by every command that reads the configuration.
struct ConfigurationOptions: ParsableArguments {
    @Option(name: .long, help: "JSON configuration file (default: Config/siwa.json when present). SIWA_* environment variables override it.")
    var config: String?

    /// Loads the configuration, or ends the process with exit code 2 and one line naming the
    /// setting (docs/reference/configuration.md).
    func load() -> Configuration {
        let environment = ProcessInfo.processInfo.environment
        let isTerminal = isatty(1) != 0
        do {
            return try Configuration.load(file: config, environment: environment, isTerminal: isTerminal)
        } catch {
            fail(error)
        }
    }

    /// The configuration as far as it can be read, and every problem found on the way.
    func loadReportingProblems() -> (configuration: Configuration?, problems: [ConfigurationError]) {
        Configuration.loadReportingProblems(file: config, environment: ProcessInfo.processInfo.environment, isTerminal: isatty(1) != 0)
    }

    /// Ends the process with exit code 2 and one line naming the setting.
    func fail(_ error: ConfigurationError) -> Never {
        let environment = ProcessInfo.processInfo.environment
        let format = Configuration.bestEffortLogFormat(file: config, environment: environment, isTerminal: isatty(1) != 0)
        LoggingSetup.reportFatal("configuration error: \(error)", format: format)
        Glibc.exit(2)
    }
}
