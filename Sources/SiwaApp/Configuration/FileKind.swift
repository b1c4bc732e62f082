import Glibc

/// What is at a path, from stat(2).
enum FileKind {
    case missing, directory, file

    static func of(_ path: String) -> FileKind {
        var info = stat()
        guard stat(path, &info) == 0 else { return .missing }
        return info.st_mode & S_IFMT == S_IFDIR ? .directory : .file
    }
}
