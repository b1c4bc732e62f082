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
            appendLiteral(#"{"time":""#, to: &line)
            LogTimestamp.append(time, to: &line)
            appendLiteral(#"","level":"info","message":"request","label":"siwa.access","request_id":"#, to: &line)
            JSONLineEncoding.appendString(record.requestID, to: &line)
            appendLiteral(#","method":"#, to: &line)
            JSONLineEncoding.appendString(record.method, to: &line)
            appendLiteral(#","path":"#, to: &line)
            JSONLineEncoding.appendString(record.path, to: &line)
            appendLiteral(#","route":"#, to: &line)
            JSONLineEncoding.appendString(record.route ?? "unmatched", to: &line)
            appendLiteral(#","status":"#, to: &line)
            appendInteger(record.status, to: &line)
            appendLiteral(#","duration_ms":"#, to: &line)
            appendMilliseconds(record.durationSeconds, to: &line)
            appendLiteral(#","bytes_in":"#, to: &line)
            appendInteger(record.requestBytes, to: &line)
            appendLiteral(#","bytes_out":"#, to: &line)
            appendInteger(record.responseBytes, to: &line)
            appendLiteral(#","client":"#, to: &line)
            JSONLineEncoding.appendString(client, to: &line)
            line.append(UInt8(ascii: "}"))
        case .text:
            LogTimestamp.append(time, to: &line)
            appendLiteral(" info siwa.access: request request_id=", to: &line)
            TextLogHandler.appendEscaped(record.requestID, to: &line)
            appendLiteral(" method=", to: &line)
            TextLogHandler.appendEscaped(record.method, to: &line)
            appendLiteral(" path=", to: &line)
            TextLogHandler.appendEscaped(record.path, to: &line)
            appendLiteral(" route=", to: &line)
            TextLogHandler.appendEscaped(record.route ?? "unmatched", to: &line)
            appendLiteral(" status=", to: &line)
            appendInteger(record.status, to: &line)
            appendLiteral(" duration_ms=", to: &line)
            appendMilliseconds(record.durationSeconds, to: &line)
            appendLiteral(" client=", to: &line)
            TextLogHandler.appendEscaped(client, to: &line)
        }
    }

    /// A literal's bytes in one copy: appending a `String`'s UTF-8 view went through its
    /// generic path for each of the line's dozen fixed pieces.
    @inline(__always)
    private static func appendLiteral(_ text: StaticString, to line: inout [UInt8]) {
        text.withUTF8Buffer { line.append(contentsOf: $0) }
    }

    /// Digits written backwards into a stack buffer and appended in one copy; by magnitude, so
    /// `Int.min` needs no negation.
    static func appendInteger(_ value: Int, to line: inout [UInt8]) {
        if value < 0 { line.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            line.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
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
