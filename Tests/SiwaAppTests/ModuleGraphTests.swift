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

    /// The descriptors know nothing of HTTP (issue 21's step 5): Sockets lists and imports only
    /// the system and its threads.
    @Test func socketsKnowsNothingOfHTTP() throws {
        let imports = try Self.imports(under: "Sources/Sockets")
        #expect(imports.count >= 4, "the walk found too few files: is Sources/Sockets the descriptors' folder?")
        let allowed: Set<String> = ["CSystem", "Glibc", "SystemThread", "Synchronization"]
        #expect(imports.filter { !Set($0.value).isSubset(of: allowed) }.keys.sorted() == [])
        let entry = try Self.packageEntry("Sockets")
        #expect(entry.contains("\"CSystem\""), "not the Sockets entry: \(entry.prefix(200))")
        #expect(!entry.contains("\"HTTPServer\"") && !entry.contains("\"WireFormat\""))
        #expect(try Self.packageEntry("HTTPServer").contains("\"Sockets\""))
    }

    /// A connection's HTTP rules do no I/O and read no clock: the file imports nothing, so no
    /// syscall and no time can be reached from it but through its inputs.
    @Test func theConnectionsRulesImportNothing() throws {
        let imports = try Self.imports(under: "Sources/HTTPServer/Server")
        #expect(imports["Connection.swift"]?.contains("Sockets") == true, "the walk did not find the connection's driver")
        #expect(imports["ConnectionState.swift"] == [])
    }
}
