import HTTPServer

/// The access-log line of one request, written straight into bytes. It is the busiest log
/// stream by far, so it skips swift-log's metadata dictionary and sorting, yet it has the same
/// shape as every other line: `time`, `level`, `message`, `label`, then its fields.
enum AccessLogLine {
    static let label = "siwa.access"

    static func make(_ record: AccessRecord, client: String, format: LogFormat, time: LogTimestamp.Instant) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(320)
        append(record, client: client, format: format, time: time, to: &line)
        return line
    }

    /// Appends the line to `line`, which the caller reuses: a request's line then allocates nothing.
    static func append(_ record: AccessRecord, client: String, format: LogFormat, time: LogTimestamp.Instant, to line: inout [UInt8]) {
        switch format {
        case .json:
            line.append(contentsOf: #"{"time":""#.utf8)
            LogTimestamp.append(time, to: &line)
            line.append(contentsOf: #"","level":"info","message":"request","label":"siwa.access","request_id":"#.utf8)
            JSONLineEncoding.appendString(record.requestID, to: &line)
            line.append(contentsOf: #","method":"#.utf8)
            JSONLineEncoding.appendString(record.method, to: &line)
            line.append(contentsOf: #","path":"#.utf8)
            JSONLineEncoding.appendString(record.path, to: &line)
            line.append(contentsOf: #","route":"#.utf8)
            JSONLineEncoding.appendString(record.route ?? "unmatched", to: &line)
            line.append(contentsOf: #","status":"#.utf8)
            appendInteger(record.status, to: &line)
            line.append(contentsOf: #","duration_ms":"#.utf8)
            appendMilliseconds(record.durationSeconds, to: &line)
            line.append(contentsOf: #","bytes_in":"#.utf8)
            appendInteger(record.requestBytes, to: &line)
            line.append(contentsOf: #","bytes_out":"#.utf8)
            appendInteger(record.responseBytes, to: &line)
            line.append(contentsOf: #","client":"#.utf8)
            JSONLineEncoding.appendString(client, to: &line)
            line.append(UInt8(ascii: "}"))
        case .text:
            LogTimestamp.append(time, to: &line)
            line.append(contentsOf: " info siwa.access: request request_id=".utf8)
            TextLogHandler.appendEscaped(record.requestID, to: &line)
            line.append(contentsOf: " method=".utf8)
            TextLogHandler.appendEscaped(record.method, to: &line)
            line.append(contentsOf: " path=".utf8)
            TextLogHandler.appendEscaped(record.path, to: &line)
            line.append(contentsOf: " route=".utf8)
            TextLogHandler.appendEscaped(record.route ?? "unmatched", to: &line)
            line.append(contentsOf: " status=".utf8)
            appendInteger(record.status, to: &line)
            line.append(contentsOf: " duration_ms=".utf8)
            appendMilliseconds(record.durationSeconds, to: &line)
            line.append(contentsOf: " client=".utf8)
            TextLogHandler.appendEscaped(client, to: &line)
        }
    }

    static func appendInteger(_ value: Int, to line: inout [UInt8]) {
        if value < 0 {
            line.append(UInt8(ascii: "-"))
            appendInteger(-value, to: &line)
            return
        }
        if value >= 10 { appendInteger(value / 10, to: &line) }
        line.append(UInt8(ascii: "0") + UInt8(value % 10))
    }

    /// Milliseconds with three decimals, as a JSON number.
    static func appendMilliseconds(_ seconds: Double, to line: inout [UInt8]) {
        let micros = max(0, Int((seconds * 1_000_000).rounded()))
        appendInteger(micros / 1000, to: &line)
        line.append(UInt8(ascii: "."))
        let fraction = micros % 1000
        line.append(UInt8(ascii: "0") + UInt8(fraction / 100))
        line.append(UInt8(ascii: "0") + UInt8(fraction / 10 % 10))
        line.append(UInt8(ascii: "0") + UInt8(fraction % 10))
    }
}
