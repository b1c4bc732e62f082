/// How a test's requests reach the application: handed to its responder in process (no socket,
/// the default for route tests) or written to its listening socket (one sample per suite keeps
/// the parser, the connection and the writer under the same assertions).
public enum Transport: String, CaseIterable, Sendable {
    case inProcess, socket
}
