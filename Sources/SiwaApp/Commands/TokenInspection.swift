import Accounts
import AppleClient
import Glibc
import HTTPClient
import JOSE
import JSON

/// `verify-token`: verifies an Apple identity token or notification exactly as the server
/// would, and says precisely why it is refused. Needs no team, key or database.
public struct TokenInspection: Sendable {
    public struct Outcome: Sendable {
        public let exitCode: Int32
        public let standardOutput: String
        public let standardError: String
    }

    public let token: String
    /// A file path or an http(s) URL; nil means `{apple_base_url}/auth/keys`.
    public let keySource: String?
    public let audiences: [String]
    public let nonce: String?
    public let now: Int64?

    public init(token: String, keySource: String?, audiences: [String], nonce: String?, now: Int64?) {
        self.token = token
        self.keySource = keySource
        self.audiences = audiences
        self.nonce = nonce
        self.now = now
    }

    public func run(configuration: Configuration) async -> Outcome {
        var notes: [String] = []
        let keySet: JSONWebKeySet
        do {
            keySet = try await loadKeys(configuration)
        } catch {
            return Outcome(exitCode: 1, standardOutput: "", standardError: "cannot load Apple's keys: \(error)\n")
        }

        let audienceList = audiences.isEmpty ? configuration.clientIDs : audiences
        if audienceList.isEmpty { notes.append("audience not checked: no --audience given and no client_ids configured") }
        // A token carrying `events` is a server-to-server notification.
        let isNotification = (try? CompactJWS(token))?.payload["events"] != nil
        let nonceCheck: TokenVerifier.NonceCheck
        if isNotification {
            nonceCheck = .notChecked
        } else if let nonce {
            nonceCheck = .check(expected: nonce, requireNonce: configuration.requireNonce)
        } else {
            nonceCheck = .notChecked
            notes.append("nonce not checked: no --nonce given")
        }
        let policy = TokenVerifier.Policy(
            kind: isNotification ? .notification : .identityToken,
            audiences: audienceList.isEmpty ? nil : Set(audienceList), nonce: nonceCheck)
        let clock = now ?? Int64(time(nil))
        do {
            let verified = try TokenVerifier.verify(token, keys: { keySet[$0] }, policy: policy, now: clock)
            notes.insert("valid \(isNotification ? "notification" : "identity token"), signed by key \(verified.keyID)", at: 0)
            if let form = verified.nonceForm { notes.append("nonce matched as \(form.rawValue)") }
            let claims = JSONWriter.string(.object(verified.payload))
            return Outcome(exitCode: 0, standardOutput: claims + "\n", standardError: notes.map { "note: \($0)\n" }.joined())
        } catch {
            let notesText = notes.map { "note: \($0)\n" }.joined()
            return Outcome(exitCode: 1, standardOutput: "", standardError: "token refused: \(error.rawValue)\n" + notesText)
        }
    }

    struct KeySourceError: Error, CustomStringConvertible {
        let description: String
    }

    private func loadKeys(_ configuration: Configuration) async throws -> JSONWebKeySet {
        let source = keySource ?? configuration.appleBaseURL + AppleEndpoint.keys.path
        let document: [UInt8]
        if source.hasPrefix("http://") || source.hasPrefix("https://") {
            let client = try HTTPClient(configuration: HTTPClientConfiguration(extraCAFile: configuration.appleCAFile))
            let response = try await client.send(HTTPClientRequest(method: "GET", url: source, headers: [], body: []), idempotent: true)
            guard response.status == 200 else { throw KeySourceError(description: "\(source) answered HTTP \(response.status)") }
            document = response.body
        } else {
            guard let bytes = FileBytes.read(source) else { throw KeySourceError(description: "cannot read \(source)") }
            document = bytes
        }
        return try JSONWebKeySet(json: document)
    }
}
