import Accounts
import WireFormat

/// Gives each raw setting its type, or a `ConfigurationError` naming its key.
///
/// `nil` means "not set": the key is absent, `null`, an empty string or an empty list, so an
/// empty `SIWA_TEAM_ID=` in a container file falls back to the default instead of failing.
struct SettingsReader {
    let values: [ConfigurationKey: RawSetting]

    private func present(_ key: ConfigurationKey) -> RawSetting? {
        switch values[key] {
        case nil, .null: nil
        case .string(let text) where text.trimmedSetting.isEmpty: nil
        case .list(let items) where items.isEmpty: nil
        case let value?: value
        }
    }

    private func wrongKind(_ key: ConfigurationKey, _ value: RawSetting, expected: String) -> ConfigurationError {
        ConfigurationError(key, "must be \(expected), not \(value.kind)")
    }

    func string(_ key: ConfigurationKey) throws(ConfigurationError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let text) = value else { throw wrongKind(key, value, expected: "a string") }
        return text.trimmedSetting
    }

    /// A rate such as `600/m`, or `0` (as a string or a number) for off; `.some(nil)` is off.
    func rate(_ key: ConfigurationKey) throws(ConfigurationError) -> RateLimit?? {
        guard let value = present(key) else { return nil }
        let text: String
        switch value {
        case .string(let string): text = string.trimmedSetting
        case .integer(let number): text = "\(number)"
        default: throw wrongKind(key, value, expected: "a rate such as 600/m")
        }
        do {
            return .some(try RateLimit.parse(text))
        } catch {
            throw ConfigurationError(key, "\(ConfigurationError.quote(text)) is not a rate (use e.g. 600/m, 10/s, 1000/h, or 0 for off)")
        }
    }

    /// A comma-separated string or an array of strings; entries trimmed, duplicates dropped.
    func list(_ key: ConfigurationKey) throws(ConfigurationError) -> [String]? {
        guard let value = present(key) else { return nil }
        var entries: [String]
        switch value {
        case .string(let text):
            entries = text.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmedSetting }
        case .list(let items):
            entries = []
            for item in items {
                guard case .string(let text) = item else {
                    throw ConfigurationError(key, "must be a list of strings, but holds \(item.kind)")
                }
                entries.append(text.trimmedSetting)
            }
        default:
            throw wrongKind(key, value, expected: "a comma-separated string or an array of strings")
        }
        guard !entries.contains(where: \.isEmpty) else {
            throw ConfigurationError(key, "has an empty entry (check for doubled or trailing commas)")
        }
        var unique: [String] = []
        for entry in entries where !unique.contains(entry) { unique.append(entry) }
        return unique
    }

    func duration(_ key: ConfigurationKey) throws(ConfigurationError) -> Duration? {
        guard let value = present(key) else { return nil }
        let shown: String
        let seconds: Result<Int64, DurationParser.Failure>
        switch value {
        case .string(let text):
            shown = ConfigurationError.quote(text.trimmedSetting)
            seconds = Result { () throws(DurationParser.Failure) in try DurationParser.seconds(text) }
        case .integer(let number):
            shown = "\(number)"
            seconds = Result { () throws(DurationParser.Failure) in try DurationParser.seconds(fromInteger: number) }
        case .number(let number):
            shown = "\(number)"
            seconds = .failure(.notADuration)
        default:
            throw wrongKind(key, value, expected: "a duration string or a number of seconds")
        }
        switch seconds {
        case .success(let seconds):
            return .seconds(seconds)
        case .failure(.notADuration):
            throw ConfigurationError(key, "\(shown) is not a duration (use 90s, 15m, 24h, 30d or seconds)")
        case .failure(.outOfRange):
            throw ConfigurationError(key, "\(shown) is too long (at most \(DurationParser.maximumSeconds / 86_400)d)")
        }
    }

    func bool(_ key: ConfigurationKey) throws(ConfigurationError) -> Bool? {
        guard let value = present(key) else { return nil }
        switch value {
        case .bool(let flag):
            return flag
        case .integer(0):
            return false
        case .integer(1):
            return true
        case .string(let text):
            switch text.trimmedSetting.lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: throw ConfigurationError(key, "\(ConfigurationError.quote(text)) is not a boolean (use true or false)")
            }
        default:
            throw ConfigurationError(key, "must be true or false, not \(value.kind)")
        }
    }

    func integer(_ key: ConfigurationKey, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = present(key) else { return nil }
        let number: Int?
        let shown: String
        switch value {
        case .integer(let integer):
            number = Int(exactly: integer)
            shown = "\(integer)"
        case .string(let text):
            let trimmed = text.trimmedSetting
            number = trimmed.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) ? Int(trimmed) : nil
            shown = ConfigurationError.quote(trimmed)
        case .number(let double):
            number = nil
            shown = "\(double)"
        default:
            throw wrongKind(key, value, expected: "an integer")
        }
        guard let number, range.contains(number) else {
            throw ConfigurationError(key, "\(shown) is not an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line breaks.
    var trimmedSetting: String { String(trimmingWhitespaceAndNewlines()) }
}
