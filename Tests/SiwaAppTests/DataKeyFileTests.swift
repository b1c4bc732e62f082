import Foundation
import Logging
import Testing
@testable import SiwaApp

@Suite struct DataKeyFileTests {
    private func configuration(_ folder: String) -> Configuration {
        var configuration = Configuration()
        configuration.database = folder + "/db/siwa.sqlite3"
        return configuration
    }

    private func folder() throws -> String {
        let folder = NSTemporaryDirectory() + "siwa-key-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder + "/db", withIntermediateDirectories: true)
        return folder
    }

    @Test func withoutDataKeyAKeyFileIsCreatedPrivateAndReused() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let first = try DataKeyFile.key(for: configuration(folder), logger: Logger(label: "test"))
        #expect(first.count == 32)
        let path = folder + "/db/data.key"
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) == first)
        #expect(try DataKeyFile.key(for: configuration(folder), logger: Logger(label: "test")) == first)
    }

    @Test func aConfiguredKeyWinsAndNoFileIsWritten() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var configured = configuration(folder)
        configured.dataKey = [UInt8](repeating: 7, count: 32)
        #expect(try DataKeyFile.key(for: configured, logger: Logger(label: "test")) == [UInt8](repeating: 7, count: 32))
        #expect(!FileManager.default.fileExists(atPath: folder + "/db/data.key"))
    }

    @Test func aDamagedKeyFileStopsTheStart() throws {
        let folder = try folder()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Data([1, 2, 3, 4, 5]).write(to: URL(fileURLWithPath: folder + "/db/data.key"))
        var damaged = configuration(folder)
        #expect(throws: DataKeyFile.Failure.self) { try DataKeyFile.key(for: damaged, logger: Logger(label: "test")) }
        damaged.listen = ListenAddress(host: "127.0.0.1", port: 0)
        #expect(throws: (any Error).self) { try Application(configuration: damaged) }
    }

    @Test func postgreSQLNeedsASharedDataKey() throws {
        var configuration = Configuration()
        configuration.database = "postgres://siwa@127.0.0.1:1/siwa"
        #expect(throws: DataKeyFile.Failure.self) { try DataKeyFile.key(for: configuration, logger: Logger(label: "test")) }
        configuration.dataKey = [UInt8](repeating: 9, count: 32)
        #expect(try DataKeyFile.key(for: configuration, logger: Logger(label: "test")) == [UInt8](repeating: 9, count: 32))
    }
}
