import Glibc

/// A failed system call, with the call's name and errno's text.
public struct SocketError: Error, CustomStringConvertible, Sendable {
    public let operation: String
    public let code: Int32

    package init(_ operation: String, code: Int32 = errno) {
        self.operation = operation
        self.code = code
    }

    public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
