import Foundation
import Testing
@testable import SiwaApp

/// docs/reference/configuration.md is the one description of the settings: its table names
/// every key the code declares, and nothing else.
@Suite struct ConfigurationReferenceTests {
    static let reference = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/reference/configuration.md")

    /// The keys of the table's rows: `| \`key\` | \`SIWA_KEY\` | …`.
    static func documentedKeys(in text: String) -> [(key: String, environment: String)] {
        text.split(separator: "\n").compactMap { line in
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count > 3, cells[0].isEmpty, cells[2].hasPrefix("`SIWA_"),
                  cells[1].hasPrefix("`"), cells[1].hasSuffix("`"), cells[2].hasSuffix("`")
            else { return nil }
            return (String(cells[1].dropFirst().dropLast()), String(cells[2].dropFirst().dropLast()))
        }
    }

    @Test func everyDeclaredKeyIsDocumentedAndNothingElse() throws {
        let text = try String(contentsOf: Self.reference, encoding: .utf8)
        let rows = Self.documentedKeys(in: text)
        let documented = rows.map(\.key)
        let declared = ConfigurationKey.allCases.map(\.rawValue)
        #expect(Set(declared).subtracting(documented).sorted() == [], "declared in ConfigurationKey, missing from the reference")
        #expect(Set(documented).subtracting(declared).sorted() == [], "in the reference, declared nowhere")
        #expect(documented.count == Set(documented).count, "a key documented twice")
        for row in rows {
            #expect(row.environment == ConfigurationKey(rawValue: row.key)?.environmentName, "\(row.key)")
        }
    }

    @Test func theRowReaderSeesOnlyKeyRows() {
        let sample = """
            | key | environment | default | meaning |
            | --- | --- | --- | --- |
            | `listen` | `SIWA_LISTEN` | `127.0.0.1:8080` | Address. |
            | `made_up` | `SIWA_MADE_UP` | — | Not a key. |
            Prose naming `session_ttl` and `SIWA_SESSION_TTL`.
            """
        let rows = Self.documentedKeys(in: sample)
        #expect(rows.map(\.key) == ["listen", "made_up"])
        #expect(rows.map(\.environment) == ["SIWA_LISTEN", "SIWA_MADE_UP"])
    }
}
