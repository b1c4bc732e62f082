import Foundation
import Testing

/// The application's core, `Accounts`, does not speak HTTP (issue 21): neither its entry in
/// Package.swift nor any of its files names HTTPServer or SiwaApp. The build alone would not
/// tell: on Linux a module the build made is importable by any target, listed or not.
@Suite struct ModuleGraphTests {
    static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The modules each Swift file under `folder` imports, by path relative to it.
    static func imports(under folder: String) throws -> [String: [String]] {
        let base = root.appendingPathComponent(folder).path
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [:] }
        var found: [String: [String]] = [:]
        for case let path as String in walker where path.hasSuffix(".swift") {
            let text = try String(contentsOfFile: base + "/" + path, encoding: .utf8)
            found[path] = text.split(separator: "\n").compactMap { line in
                let words = line.split(separator: " ")
                guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { return nil }
                return String(words[index + 1])
            }
        }
        return found
    }

    /// The text of a target's entry in Package.swift, from `name: "…"` to the next target.
    static func packageEntry(_ target: String) throws -> Substring {
        let package = try String(contentsOfFile: root.appendingPathComponent("Package.swift").path, encoding: .utf8)
        let start = try #require(package.range(of: "name: \"\(target)\""))
        let rest = package[start.upperBound...]
        let end = rest.range(of: ".target(")?.lowerBound ?? rest.range(of: ".executableTarget(")?.lowerBound ?? rest.endIndex
        return rest[..<end]
    }

    @Test func accountsImportsNeitherHTTPServerNorSiwaApp() throws {
        let imports = try Self.imports(under: "Sources/Accounts")
        #expect(imports.count > 20, "the walk found too few files: is Sources/Accounts the core's folder?")
        let offending = imports.filter { !Set($0.value).isDisjoint(with: ["HTTPServer", "SiwaApp"]) }.keys.sorted()
        #expect(offending == [])
    }

    @Test func accountsPackageEntryDoesNotListHTTPServer() throws {
        let entry = try Self.packageEntry("Accounts")
        #expect(entry.contains("\"Store\""), "not the Accounts entry: \(entry.prefix(200))")
        #expect(!entry.contains("\"HTTPServer\""))
        #expect(!entry.contains("\"SiwaApp\""))
    }

    /// SiwaApp is the HTTP face over the core: it lists Accounts.
    @Test func siwaAppDependsOnAccounts() throws {
        #expect(try Self.packageEntry("SiwaApp").contains("\"Accounts\""))
    }
}
