import ArgumentParser
import SiwaApp

struct CheckConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Validate the configuration and print what was found. Exit 0 when all is well, 1 otherwise."
    )

    @OptionGroup var options: ConfigurationOptions

    /// Reports every problem and exits 1, never 2: this command's job is to report (docs/reference/command-line.md).
    func run() throws {
        let (configuration, problems) = options.loadReportingProblems()
        let check = ConfigurationCheck(configuration, problems: problems)
        print(check.report(summary: configuration?.summary() ?? []))
        if !check.allWell { throw ExitCode(1) }
    }
}
