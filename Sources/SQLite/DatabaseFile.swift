#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// Creates the database's folder (0700) and file (0600) before SQLite opens it. The file may
/// hold users' tokens; SQLite gives its -wal and -shm files the database file's mode, so
/// creating the file ourselves protects all three.
enum DatabaseFile {
    static func prepare(path: String) throws {
        guard !path.isEmpty, path != ":memory:", !path.hasPrefix("file:") else {
            throw SQLiteError.misuse("a Database needs a file path, not '\(path)'")
        }
        if let slash = path.lastIndex(of: "/") {
            let folder = String(path[..<slash])
            if !folder.isEmpty { try makeFolder(folder) }
        }
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            // The umask can only remove bits, but make the mode exact anyway.
            fchmod(descriptor, 0o600)
            close(descriptor)
        } else if errno != EEXIST {
            throw failure("cannot create \(path)")
        }
    }

    /// `mkdir -p` with mode 0700 for every folder it creates.
    private static func makeFolder(_ folder: String) throws {
        var info = stat()
        if stat(folder, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw SQLiteError(code: SQLITE_CANTOPEN, message: "\(folder) is not a folder")
            }
            return
        }
        if let slash = folder.lastIndex(of: "/"), slash != folder.startIndex {
            try makeFolder(String(folder[..<slash]))
        }
        if mkdir(folder, 0o700) == 0 {
            chmod(folder, 0o700)
        } else if errno != EEXIST {
            throw failure("cannot create folder \(folder)")
        }
    }

    private static func failure(_ what: String) -> SQLiteError {
        SQLiteError(code: SQLITE_CANTOPEN, message: "\(what): \(String(cString: strerror(errno)))")
    }
}
