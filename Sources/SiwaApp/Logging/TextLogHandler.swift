import Logging

/// Writes each record as one line for people at a terminal:
/// `2026-11-22T10:00:00.123Z info label: message key=value key2="two words"`.
///
/// Line breaks and control characters in the message and values are escaped (`\n`), so a
/// record is always exactly one line and a logged value cannot forge another record.
public struct TextLogHandler: LogHandler {
    public let label: String
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let sink: LogSink

    public init(
        label: String,
        level: Logger.Level = .info,
        sink: LogSink = .standardOutput,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.logLevel = level
        self.sink = sink
        self.metadataProvider = metadataProvider
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        sink.append(Self.line(
            time: LogTimestamp.now(),
            level: event.level,
            label: label,
            message: event.message.description,
            metadata: event.mergedMetadata(handler: metadata, provider: metadataProvider),
            error: event.error
        ))
    }

    /// One line, without the trailing newline.
    static func line(
        time: LogTimestamp.Instant,
        level: Logger.Level,
        label: String,
        message: String,
        metadata: Logger.Metadata,
        error: (any Error)? = nil
    ) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(96 + message.utf8.count)
        LogTimestamp.append(time, to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: level.rawValue.utf8)
        line.append(UInt8(ascii: " "))
        appendEscaped(label, to: &line)
        line.append(contentsOf: ": ".utf8)
        appendEscaped(message, to: &line)
        var metadata = metadata
        if let error { metadata["error"] = .string(String(describing: error)) }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line.append(UInt8(ascii: " "))
            appendEscaped(key, to: &line)
            line.append(UInt8(ascii: "="))
            appendValue(value, to: &line)
        }
        return line
    }

    /// Plain text with control characters escaped (`\n`, `\u001b`); nothing else is special here.
    static func appendEscaped(_ text: String, to line: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\n"): line.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): line.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): line.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20, 0x7F:
                var escaped: [UInt8] = []
                JSONLineEncoding.appendString(String(UnicodeScalar(byte)), to: &escaped)
                line.append(contentsOf: escaped.dropFirst().dropLast())
            default:
                line.append(byte)
            }
        }
    }

    /// A value as-is when it is one plain word, else quoted JSON-style; nested values as JSON.
    private static func appendValue(_ value: Logger.MetadataValue, to line: inout [UInt8]) {
        switch value {
        case .string(let text):
            appendWord(text, to: &line)
        case .stringConvertible(let convertible):
            appendWord(convertible.description, to: &line)
        case .dictionary, .array:
            JSONLineEncoding.appendValue(value, to: &line)
        }
    }

    private static func appendWord(_ text: String, to line: inout [UInt8]) {
        let needsQuotes = text.isEmpty || text.utf8.contains { byte in
            byte <= 0x20 || byte == 0x7F || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "=")
        }
        if needsQuotes {
            JSONLineEncoding.appendString(text, to: &line)
        } else {
            line.append(contentsOf: text.utf8)
        }
    }
}
