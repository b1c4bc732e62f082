/// A template asked for a value the caller did not give (a programming error caught by tests).
public enum MailTemplateError: Error, Equatable, CustomStringConvertible {
    case missingValue(kind: MailKind, key: String)
    case unknownChange(String)

    public var description: String {
        switch self {
        case .missingValue(let kind, let key): "the \(kind.rawValue) template needs a value for {{\(key)}}"
        case .unknownChange(let change): "no security notice for the change \"\(change)\""
        }
    }
}
