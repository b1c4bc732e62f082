import HTTPServer
import MailTemplates

/// The pages' words, read from the strings files SwiftPM embeds in the binary
/// (`Strings/pages.<language>.txt`, one `key=text` a line, `#` for a comment). A `{name}` in a
/// text is filled in by the page, in one pass, so a value that itself holds `{…}` stays as it is.
enum PageWords {
    static func text(_ key: PageText, _ language: Language, _ values: [String: String] = [:]) -> String {
        fill(raw(key, language)) { values[$0] }
    }

    /// The text made safe for HTML; `values` are escaped too, `markup` (HTML the page built from
    /// escaped parts) goes in as it is.
    static func html(_ key: PageText, _ language: Language, _ values: [String: String] = [:], markup: [String: String] = [:]) -> String {
        fill(HTMLText.escape(raw(key, language))) { name in values[name].map(HTMLText.escape) ?? markup[name] }
    }

    /// A key missing from a language (`PageWordsTests` makes sure none is) falls back to English,
    /// then to the key itself: a page is never refused for its words.
    private static func raw(_ key: PageText, _ language: Language) -> String {
        tables[language]?[key.rawValue] ?? tables[.en]?[key.rawValue] ?? key.rawValue
    }

    /// Replaces each `{name}` that `value` knows; others stay as they are.
    static func fill(_ text: String, _ value: (String) -> String?) -> String {
        guard text.contains("{") else { return text }
        var output = ""
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            output += rest[..<open]
            if let filled = value(String(rest[rest.index(after: open)..<close])) {
                output += filled
                rest = rest[rest.index(after: close)...]
            } else {
                output += "{"
                rest = rest[rest.index(after: open)...]
            }
        }
        return output + rest
    }

    /// Each file's `key=text` lines in order (duplicates included, for the tests to find).
    static func entries(_ language: Language) -> [(key: String, text: String)] {
        let bytes: [UInt8] =
            switch language {
            case .en: EmbeddedFiles.pagesEnglish
            case .ko: EmbeddedFiles.pagesKorean
            }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").compactMap { line in
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { return nil }
            return (String(line[..<equals]), String(line[line.index(after: equals)...]))
        }
    }

    private static let tables: [Language: [String: String]] = Dictionary(uniqueKeysWithValues: Language.allCases.map { language in
        (language, Dictionary(entries(language).map { ($0.key, $0.text) }, uniquingKeysWith: { first, _ in first }))
    })
}
