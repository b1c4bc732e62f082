import ArgumentParser
import Glibc
import Logging
import SiwaApp

/// `rotate-signing-key` (docs/guides/connecting-your-backend.md): replaces the access-token signing key in the configured
/// database; running servers pick the new key up by themselves.
struct RotateSigningKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rotate-signing-key",
        abstract: "Replace the access-token signing key in the configured database; prints the new kid on stdout.",
        discussion: """
            The new key signs at once: a server started afterwards uses it from its first token, a \
            running server within 5 seconds (it re-reads the keys that often). The keys it replaces \
            stop signing and stay in /.well-known/jwks.json for a day, so tokens they signed still \
            verify; --retire-old removes them at once (a key that leaked: tokens it signed stop \
            verifying once verifiers fetch the JWKS again). The kid alone is printed on stdout (for \
            scripts), the rest on stderr; no key material is ever printed.
            """
    )

    @OptionGroup var options: ConfigurationOptions

    @Flag(name: .customLong("retire-old"), help: "Remove every older key from the JWKS at once instead of a day later.")
    var retireOld = false

    func run() throws {
        let configuration = options.load()
        do {
            let rotated = try SigningKeyRotation.rotate(
                configuration: configuration, logger: Logger(label: "siwa"), now: Int64(time(nil)), retireOld: retireOld)
            print(rotated.kid)
            let bytes = Array((rotated.summary + "\n").utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        } catch {
            LoggingSetup.reportFatal("rotate-signing-key failed: \(error)", format: configuration.logFormat)
            throw ExitCode(1)
        }
    }
}
