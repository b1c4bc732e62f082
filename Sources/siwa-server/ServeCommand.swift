import ArgumentParser
// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import Logging
import SiwaApp

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the server: applies migrations, listens, and stops gracefully on SIGTERM or SIGINT."
    )

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        let configuration = options.load()
        if let problem = configuration.serveProblems.first { options.fail(problem) }
        LoggingSetup.bootstrap(format: configuration.logFormat, level: configuration.logLevel)
        let logger = Logger(label: "siwa")
        let application: Application
        do {
            application = try Application(configuration: configuration, logger: logger)
            try application.start()
        } catch {
            LoggingSetup.reportFatal("cannot start: \(error)", format: configuration.logFormat)
            throw ExitCode(1)
        }
        let signal = await StopSignal.next()
        logger.info("stopping", metadata: ["signal": .string(signal)])
        await application.stop()
        LogSink.standardOutput.flush()
    }
}
