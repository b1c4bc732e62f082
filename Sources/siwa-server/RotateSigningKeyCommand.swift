import ArgumentParser
import Glibc
import Logging
import SiwaApp

/// `rotate-signing-key` (SPEC §8): replaces the access-token signing key in the configured
/// database; running servers pick the new key up by themselves.
struct RotateSigningKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-signing-key",
        abstract: "Replace the access-token signing key in the configured database; prints the new kid on stdout.",
        discussion: """
            The new key is published in /.well-known/jwks.json at once and starts signing a few \
            minutes later, once every instance and every verifier's cached copy has it; the key it \
            replaces stays published for a day after it stops signing. The kid alone is printed on \
            stdout (for scripts), the times on stderr; no key material is ever printed.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    func run() throws {
        let configuration = options.load()
        do {
            let rotated = try SigningKeyRotation.rotate(configuration: configuration, logger: Logger(label: "siwa"), now: Int64(time(nil)))
            print(rotated.kid)
            let bytes = Array((rotated.summary + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        } catch {
            LoggingSetup.reportFatal("rotate-signing-key failed: \(error)", format: configuration.logFormat)
            throw ExitCode(1)
        }
    }
}
