import Accounts
import ArgumentParser
// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import JOSE
import SiwaApp

struct ClientSecretCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "client-secret",
        abstract: "Print a freshly minted client secret JWT, for curl when debugging against Apple."
    )

    @OptionGroup var options: ConfigurationOptions

    @Option(name: .customLong("client-id"), help: "The client id the secret is for (default: web_client_id).")
    var clientID: String?

    func run() throws {
        let configuration = options.load()
        let minter: ClientSecretMinter
        do {
            minter = try AppleCredentials.minter(configuration)
        } catch {
            options.fail(error)
        }
        guard let clientID = clientID ?? configuration.webClientID else {
            options.fail(ConfigurationError(key: "client_ids", problem: "no client id: pass --client-id or set client_ids"))
        }
        print(try minter.mint(for: clientID, now: Int64(Date().timeIntervalSince1970)))
    }
}
