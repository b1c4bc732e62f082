import Foundation
import SiwaClient
import Testing

@Suite struct SessionStoreTests {
    @Test func theFileStoreKeepsTheSessionAcrossClientInstances() async throws {
        let server = try await TestServer.shared.value
        let url = try temporaryFolder().appendingPathComponent("session.json")
        let nonce = AppleNonce()
        let signedIn = try await server.client(store: FileSessionStore(url: url))
            .signIn(with: try await server.credential(sub: TestServer.newSub(), nonce: nonce), nonce: nonce.raw)

        // The app quits; a new process reads the file.
        let relaunched = server.client(store: FileSessionStore(url: url))
        #expect(try await relaunched.session?.token == signedIn.session.token)
        #expect(try await relaunched.me().id == signedIn.user.id)
        let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)

        try await relaunched.signOut()
        #expect(!FileManager.default.fileExists(atPath: url.path))
        #expect(try await FileSessionStore(url: url).load() == SiwaClientState())
    }

    @Test func aFileThatHoldsNoSessionIsAStoreError() async throws {
        let url = try temporaryFolder().appendingPathComponent("session.json")
        try Data("not json".utf8).write(to: url)
        let error = await #expect(throws: SiwaError.self) { try await FileSessionStore(url: url).load() }
        #expect(error.map { if case .store = $0 { true } else { false } } == true)
        // Nothing was changed by the failed read.
        #expect(try String(contentsOf: url, encoding: .utf8) == "not json")
    }
}
