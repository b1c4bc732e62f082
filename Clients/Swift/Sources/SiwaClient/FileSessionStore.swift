import Foundation

/// Keeps the state as JSON in one file, readable by its owner only (mode 0600): for Linux and
/// command-line tools. Apps on Apple platforms use `KeychainSessionStore`.
public struct FileSessionStore: SessionStore {
    public let url: URL

    public init(url: URL) {
        self.url = url
    }

    public func load() async throws -> SiwaClientState {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return SiwaClientState()
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return SiwaClientState() }
            throw SiwaError.store("cannot read \(url.path): \(error.localizedDescription)")
        }
        do {
            return try JSONDecoder().decode(SiwaClientState.self, from: data)
        } catch {
            throw SiwaError.store("\(url.path) does not hold a session: \(error.localizedDescription)")
        }
    }

    public func save(_ state: SiwaClientState) async throws {
        let manager = FileManager.default
        if state.isEmpty {
            if manager.fileExists(atPath: url.path) {
                do { try manager.removeItem(at: url) } catch { throw SiwaError.store("cannot remove \(url.path): \(error.localizedDescription)") }
            }
            return
        }
        do {
            let data = try JSONEncoder().encode(state)
            // Written beside the file and renamed over it, so a crash leaves the old state or
            // the new one, never half of one; created 0600 so the token is never readable by others.
            let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
            guard manager.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
                throw SiwaError.store("cannot write \(temporary.path)")
            }
            guard rename(temporary.path, url.path) == 0 else {
                let reason = String(cString: strerror(errno))
                try? manager.removeItem(at: temporary)
                throw SiwaError.store("cannot write \(url.path): \(reason)")
            }
        } catch let error as SiwaError {
            throw error
        } catch {
            throw SiwaError.store("cannot write \(url.path): \(error.localizedDescription)")
        }
    }
}
