import ArgumentParser
import JOSE
import SiwaApp

struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the setup against Apple: the client secret, Apple's answer to it, the keys, the database and the webhook receiver. Exit 0 when all is well, 1 otherwise.",
        discussion: """
            For each client id, Apple's token endpoint is asked with a made-up code: invalid_grant \
            means Apple accepts the client secret, invalid_client that it does not, and the line \
            says which setting to look at. With webhook_url, the receiver is sent a HEAD request \
            (no event): any HTTP answer means it is reachable. Nothing secret is printed.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    @Option(name: .customLong("now"), help: ArgumentHelp("Mint the client secret as at this time (Unix seconds), to see what Apple says to a clock that is off.", valueName: "UNIX_SECONDS"))
    var now: Int64?

    func validate() throws {
        // The minter adds to this time: keep it a real one.
        if let now, !(0...AppleClaims.latestTime).contains(now) {
            throw ValidationError("--now must be between 0 and \(AppleClaims.latestTime)")
        }
    }

    /// Reports every problem, configuration ones included, and exits 1: like `check-config`,
    /// this command's job is to report.
    func run() async throws {
        let (configuration, problems) = options.loadReportingProblems()
        let checks = await Doctor(configuration: configuration, problems: problems, now: now).run()
        print(Doctor.report(checks))
        if checks.contains(where: { !$0.ok }) { throw ExitCode(1) }
    }
}
