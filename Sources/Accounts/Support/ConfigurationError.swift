/// A configuration problem, named by the setting's key (or the command's argument) so an
/// operator knows what to fix.
///
/// The description is `<key>: <problem>` on one line. Problems about secret keys
/// (`private_key`, `data_key`) say what is wrong without ever repeating the value.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The setting's key as written in the JSON file (`team_id`), or `config` for the file itself.
    public let key: String
    public let problem: String

    public init(key: String, problem: String) {
        self.key = key
        self.problem = problem
    }

    public var description: String { "\(key): \(problem)" }
}
