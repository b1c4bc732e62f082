import ArgumentParser
import SiwaApp

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate the configuration and print what was found. Exit 0 when all is well, 1 otherwise."
    )

    @OptionGroup var options: ConfigurationOptions

    func run() throws {
        let configuration = options.load()
        let check = ConfigurationCheck(configuration)
        print(check.report(summary: configuration.summary()))
        if !check.allWell { throw ExitCode(1) }
    }
}
