import Foundation
import Testing

/// Each engine's driver is imported only in its own folder of the Store (issue 21): the rest of
/// the module speaks `SQLConnection`, `SQLValue` and `SQLRow`.
@Suite struct EngineSeamTests {
    static let storeSources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/Store")

    /// Paths under Sources/Store, relative to it, of the Swift files that import `module`.
    static func files(importing module: String) throws -> [String] {
        let root = storeSources.path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = try String(contentsOfFile: root + "/" + path, encoding: .utf8)
            if text.split(separator: "\n").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "import \(module)" }) {
                found.append(path)
            }
        }
        return found.sorted()
    }

    @Test func sqliteIsImportedOnlyUnderEngineSQLite() throws {
        let importing = try Self.files(importing: "SQLite")
        #expect(!importing.isEmpty, "the walk found no file: is \(Self.storeSources.path) the Store's folder?")
        #expect(importing.filter { !$0.hasPrefix("Engine/SQLite/") } == [])
    }

    @Test func postgreSQLIsImportedOnlyUnderEnginePostgreSQL() throws {
        let importing = try Self.files(importing: "PostgreSQL")
        #expect(!importing.isEmpty, "the walk found no file: is \(Self.storeSources.path) the Store's folder?")
        #expect(importing.filter { !$0.hasPrefix("Engine/PostgreSQL/") } == [])
    }
}
