import Glibc
import JSON

/// Files in the state directory, written atomically (temporary file, fsync, rename) so a crash
/// mid-save leaves the previous state whole.
struct StateFile: Sendable {
    let directory: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func path(_ name: String) -> String { directory + "/" + name }

    func createDirectory() throws {
        var prefix = directory.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw Failure(description: "cannot create \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }

    func read(_ name: String) -> [UInt8]? {
        let fd = open(path(name), O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? bytes : nil }
            bytes += buffer[0..<count]
        }
    }

    func write(_ name: String, _ bytes: [UInt8], mode: mode_t = 0o600) throws {
        let target = path(name)
        let temporary = target + ".tmp-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var offset = 0
        while offset < bytes.count {
            let count = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                close(fd)
                unlink(temporary)
                throw Failure(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
            }
            offset += count
        }
        fsync(fd)
        close(fd)
        guard rename(temporary, target) == 0 else {
            unlink(temporary)
            throw Failure(description: "cannot replace \(target): \(String(cString: strerror(errno)))")
        }
    }

    func readJSON(_ name: String) throws -> JSONValue? {
        guard let bytes = read(name) else { return nil }
        var parser = JSONParser()
        parser.maxBytes = 256 << 20
        parser.maxDepth = 16
        do {
            return try parser.parse(bytes)
        } catch {
            throw Failure(description: "\(path(name)) is not JSON: \(error)")
        }
    }
}
