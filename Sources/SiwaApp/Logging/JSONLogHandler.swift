import Logging

/// Writes each record as one compact JSON object per line:
/// `{"time":"2026-11-22T10:00:00.123Z","level":"info","message":"…","label":"…",<metadata…>}`.
///
/// Metadata keys follow in sorted order; nested metadata becomes JSON objects and arrays.
/// A metadata key that clashes with one of the four fixed members is written with a leading `_`
/// so the object never holds a key twice.
public struct JSONLogHandler: LogHandler {
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

    private static let reservedKeys: Set<String> = ["time", "level", "message", "label"]

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
        line.reserveCapacity(128 + message.utf8.count)
        line.append(contentsOf: #"{"time":""#.utf8)
        LogTimestamp.append(time, to: &line)
        line.append(contentsOf: #"","level":""#.utf8)
        line.append(contentsOf: level.rawValue.utf8)
        line.append(UInt8(ascii: "\""))
        JSONLineEncoding.appendKey("message", to: &line)
        JSONLineEncoding.appendString(message, to: &line)
        JSONLineEncoding.appendKey("label", to: &line)
        JSONLineEncoding.appendString(label, to: &line)
        var metadata = metadata
        if let error { metadata["error"] = .string(String(describing: error)) }
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            JSONLineEncoding.appendKey(reservedKeys.contains(key) ? "_" + key : key, to: &line)
            JSONLineEncoding.appendValue(value, to: &line)
        }
        line.append(UInt8(ascii: "}"))
        return line
    }
}
