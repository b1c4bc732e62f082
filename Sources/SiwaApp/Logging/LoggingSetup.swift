#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization

/// Process-wide logging: installs the handlers once, and reports fatal errors on stderr.
public enum LoggingSetup {
    private static let bootstrapped = Atomic<Bool>(false)

    /// Makes every `Logger` write `format` lines at `level` and above to stdout through
    /// `LogSink.standardOutput`. Only the first call has an effect (swift-log allows one
    /// bootstrap per process); it returns whether this call was that one.
    @discardableResult
    public static func bootstrap(format: LogFormat, level: Logger.Level) -> Bool {
        guard bootstrapped.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else { return false }
        let sink = LogSink.standardOutput
        sink.format = format
        LoggingSystem.bootstrap({ label, provider in
            switch format {
            case .json: JSONLogHandler(label: label, level: level, sink: sink, metadataProvider: provider)
            case .text: TextLogHandler(label: label, level: level, sink: sink, metadataProvider: provider)
            }
        }, metadataProvider: nil)
        // Lines still buffered when the process calls exit() must not be lost.
        atexit { LogSink.standardOutput.flush() }
        return true
    }

    /// Writes `message` to stderr at once as exactly one line: a JSON object (`time`, `level`
    /// "critical", `message`, `label`) when `format` is `.json`, else the message as text, with
    /// line breaks escaped either way. Buffered stdout lines are flushed first, so the order
    /// seen by a person reading both streams is the order things happened.
    public static func reportFatal(_ message: String, format: LogFormat?) {
        if bootstrapped.load(ordering: .acquiring) { LogSink.standardOutput.flush() }
        LogSink.fileDescriptorWriter(2)(fatalLine(message, format: format))
    }

    /// The line `reportFatal` writes, newline included.
    static func fatalLine(_ message: String, format: LogFormat?) -> [UInt8] {
        var line: [UInt8]
        switch format {
        case .json?:
            line = JSONLogHandler.line(
                time: LogTimestamp.now(), level: .critical, label: "siwa-server", message: message, metadata: [:]
            )
        case .text?, nil:
            line = []
            TextLogHandler.appendEscaped(message, to: &line)
        }
        line.append(UInt8(ascii: "\n"))
        return line
    }
}
