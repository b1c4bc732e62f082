// FoundationEssentials only: the full Foundation library adds megabytes of resident memory.
#if canImport(FoundationEssentials)
import Accounts
import FoundationEssentials
#else
import Foundation
#endif
import JSON

/// A setting's value before it is given its type: a JSON value from the file, or a string from
/// the environment.
enum RawSetting: Equatable {
    case string(String)
    case integer(Int64)
    case number(Double)
    case bool(Bool)
    case list([RawSetting])
    /// `null`, an object, or anything else no key accepts; kept so the error can name the key.
    case null
    case object

    /// From a parsed JSON value; objects are kept only as `.object` so the error can name the key.
    init(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let flag): self = .bool(flag)
        case .integer(let number): self = .integer(number)
        case .double(let number): self = .number(number)
        case .string(let text): self = .string(text)
        case .array(let elements): self = .list(elements.map(RawSetting.init))
        case .object: self = .object
        }
    }

    /// What the value is, for "must be a string, not a boolean".
    var kind: String {
        switch self {
        case .string: "a string"
        case .integer, .number: "a number"
        case .bool: "a boolean"
        case .list: "an array"
        case .null: "null"
        case .object: "an object"
        }
    }

    /// Reads the JSON configuration file: a top-level object whose keys must all be known; each
    /// unknown key is a problem added to `unknownKeys` (the caller decides whether it is fatal).
    static func readFile(_ path: String, unknownKeys: inout [ConfigurationError]) throws(ConfigurationError) -> [ConfigurationKey: RawSetting] {
        switch FileKind.of(path) {
        case .missing: throw ConfigurationError(key: "config", problem: "cannot read \(ConfigurationError.quote(path)): no such file")
        case .directory: throw ConfigurationError(key: "config", problem: "cannot read \(ConfigurationError.quote(path)): it is a directory")
        case .file: break
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ConfigurationError(key: "config", problem: "cannot read \(ConfigurationError.quote(path)): permission denied")
        }
        let object: JSONObject
        do {
            guard let parsed = try JSONParser.parse(Array(data)).object else {
                throw ConfigurationError(
                    key: "config", problem: "\(ConfigurationError.quote(path)) is not a JSON object of settings (the top level must be an object)")
            }
            object = parsed
        } catch let failure as JSONParser.Failure {
            // Only the position: the file may hold `private_key`, so its content is never echoed.
            throw ConfigurationError(
                key: "config", problem: "\(ConfigurationError.quote(path)) is not a JSON object of settings (invalid JSON near byte \(failure.offset))")
        } catch {
            throw error as! ConfigurationError
        }
        var settings: [ConfigurationKey: RawSetting] = [:]
        for (name, value) in object.members.map({ ($0.key, RawSetting($0.value)) }).sorted(by: { $0.0 < $1.0 }) {
            guard let key = ConfigurationKey(rawValue: name) else {
                var problem = "is not a known setting (in \(ConfigurationError.quote(path)))"
                if let suggestion = Self.closestKey(to: name) { problem += "; did you mean \(suggestion.rawValue)?" }
                unknownKeys.append(ConfigurationError(key: name, problem: problem))
                continue
            }
            settings[key] = value
        }
        return settings
    }

    /// The known key a typo most likely meant, when one is close enough.
    static func closestKey(to name: String) -> ConfigurationKey? {
        let lowered = name.lowercased()
        var best: (key: ConfigurationKey, distance: Int)?
        for key in ConfigurationKey.allCases {
            let distance = editDistance(Array(lowered.utf8), Array(key.rawValue.utf8))
            if distance <= max(2, key.rawValue.count / 4), distance < (best?.distance ?? .max) {
                best = (key, distance)
            }
        }
        return best?.key
    }

    private static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(Swift.min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}
