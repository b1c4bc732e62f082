import Accounts
import Logging

/// The transfer commands' log lines (a warning about the data key file, say), written as
/// plain lines through the console to stderr, since stdout may be carrying the CSV.
struct ConsoleLogHandler: LogHandler {
    let console: TransferConsole
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let details = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        var line: [UInt8] = Array("\(event.level): ".utf8)
        TextLogHandler.appendEscaped(event.message.description + (details.isEmpty ? "" : " " + details), to: &line)
        console.line(String(decoding: line, as: UTF8.self))
    }
}
