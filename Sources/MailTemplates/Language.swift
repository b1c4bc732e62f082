/// The languages siwa-server writes in: its pages and its mail (English and Korean).
public enum Language: String, Sendable, CaseIterable {
    case en
    case ko

    /// The first of `en` and `ko` that an `Accept-Language` header names, by its weights and then
    /// its order (`ko-KR` names `ko`; `q=0` refuses a language); `en` when it names neither.
    public static func negotiate(acceptLanguage: String?) -> Language {
        guard let acceptLanguage else { return .en }
        var best: (language: Language, weight: Int)?
        for item in acceptLanguage.split(separator: ",") {
            let parts = item.split(separator: ";")
            guard let range = parts.first else { continue }
            let primary = range.split(separator: "-").first.map { String($0).trimmedSpaces.lowercased() } ?? ""
            guard let language = Language(rawValue: primary) else { continue }
            let weight = parts.dropFirst().lazy.compactMap { Self.weight(of: String($0)) }.first ?? 1000
            guard weight > 0 else { continue }
            if best == nil || weight > best!.weight { best = (language, weight) }
        }
        return best?.language ?? .en
    }

    /// `q=0.8` as thousandths (800); nil for a parameter that is not a valid weight.
    static func weight(of parameter: String) -> Int? {
        let text = parameter.trimmedSpaces
        guard text.hasPrefix("q=") || text.hasPrefix("Q=") else { return nil }
        let value = Array(text.utf8.dropFirst(2))
        guard let first = value.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        var thousandths = Int(first - UInt8(ascii: "0")) * 1000
        guard value.count > 1 else { return thousandths }
        guard value[1] == UInt8(ascii: "."), value.count <= 5 else { return nil }
        var scale = 100
        for digit in value.dropFirst(2) {
            guard digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else { return nil }
            thousandths += Int(digit - UInt8(ascii: "0")) * scale
            scale /= 10
        }
        return thousandths <= 1000 ? thousandths : nil
    }
}

extension String {
    var trimmedSpaces: String {
        String(self.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}
