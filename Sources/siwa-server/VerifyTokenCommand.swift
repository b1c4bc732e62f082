import ArgumentParser
import Glibc
import SiwaApp

struct VerifyTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify-token",
        abstract: "Verify an Apple identity token or notification JWS as the server would; print its claims, or why it is refused.",
        discussion: "Exit 0 with the claims as JSON on stdout; exit 1 with the reason (one of the reason codes in docs/reference/http-api.md) on stderr."
    )

    @Argument(help: "The token (compact JWS).")
    var token: String

    @Option(help: "Apple's keys: a JWKS file or an http(s) URL (default: {apple_base_url}/auth/keys).")
    var jwks: String?

    @Option(help: "An accepted audience; repeat for several (default: the configured client_ids).")
    var audience: [String] = []

    @Option(help: "The raw nonce the client generated; without it the nonce is not checked.")
    var nonce: String?

    @Option(help: "Verify as if the time were this (seconds since 1970).")
    var now: Int64?

    @OptionGroup var options: ConfigurationOptions

    func run() async throws {
        let configuration = options.load()
        let inspection = TokenInspection(token: token, keySource: jwks, audiences: audience, nonce: nonce, now: now)
        let outcome = await inspection.run(configuration: configuration)
        print(outcome.standardOutput, terminator: "")
        if !outcome.standardError.isEmpty {
            let bytes = Array(outcome.standardError.utf8)
            _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
        }
        if outcome.exitCode != 0 { throw ExitCode(outcome.exitCode) }
    }
}
