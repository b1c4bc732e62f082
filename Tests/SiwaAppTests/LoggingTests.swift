#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import Logging
import Synchronization
import Testing
import TestSupport
@testable import SiwaApp

/// Collects what a `LogSink` writes, batch by batch.
private final class CapturedOutput: Sendable {
    private let bytes = Mutex<[UInt8]>([])
    private let batches = Mutex(0)

    var writer: LogSink.Writer {
        { [self] batch in
            bytes.withLock { $0.append(contentsOf: batch) }
            batches.withLock { $0 += 1 }
        }
    }

    var text: String { String(decoding: bytes.withLock { $0 }, as: UTF8.self) }
    var batchCount: Int { batches.withLock { $0 } }

    /// The lines written so far, without their newlines.
    var lines: [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        return lines
    }
}

private func jsonObject(_ line: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
    return try #require(object as? [String: Any])
}

private func jsonLogger(_ sink: LogSink, level: Logger.Level = .trace) -> Logger {
    Logger(label: "siwa.test") { JSONLogHandler(label: $0, level: level, sink: sink) }
}

private func textLogger(_ sink: LogSink) -> Logger {
    Logger(label: "siwa.test") { TextLogHandler(label: $0, level: .trace, sink: sink) }
}

private let timestampPattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"#

@Suite struct LoggingTests {
    // MARK: JSON lines

    @Test func jsonLineIsValidJSONWithMetadata() throws {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        var logger = jsonLogger(sink)
        logger[metadataKey: "request_id"] = "req-1"
        logger.info("signed in", metadata: [
            "status": .stringConvertible(200),
            "ratio": .stringConvertible(0.5),
            "private": .stringConvertible(true),
            "user": ["id": "usr_1", "tags": ["a", "b"]],
            "message": "clashing key",
        ])
        sink.flush()

        let lines = output.lines
        try #require(lines.count == 1)
        let object = try jsonObject(lines[0])
        #expect(lines[0].hasPrefix(#"{"time":""#))
        let time = try #require(object["time"] as? String)
        #expect(time.wholeMatch(of: try Regex(timestampPattern)) != nil)
        #expect(object["level"] as? String == "info")
        #expect(object["message"] as? String == "signed in")
        #expect(object["label"] as? String == "siwa.test")
        #expect(object["request_id"] as? String == "req-1")
        #expect(object["status"] as? Int == 200)
        #expect(object["ratio"] as? Double == 0.5)
        #expect(object["private"] as? Bool == true)
        let user = try #require(object["user"] as? [String: Any])
        #expect(user["id"] as? String == "usr_1")
        #expect(user["tags"] as? [String] == ["a", "b"])
        #expect(object["_message"] as? String == "clashing key")
    }

    @Test(arguments: Logger.Level.allCases)
    func everyLevelUsesSwiftLogsName(level: Logger.Level) throws {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        jsonLogger(sink).log(level: level, "x")
        sink.flush()
        #expect(try jsonObject(output.lines[0])["level"] as? String == level.rawValue)
    }

    @Test func levelFilterApplies() {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        let logger = jsonLogger(sink, level: .warning)
        logger.info("hidden")
        logger.error("shown")
        sink.flush()
        #expect(output.lines.count == 1)
        #expect(output.text.contains("shown"))
    }

    @Test func callMetadataWinsOverLoggerMetadata() throws {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        var logger = jsonLogger(sink)
        logger[metadataKey: "route"] = "/old"
        logger[metadataKey: "kept"] = "yes"
        logger.info("x", metadata: ["route": "/new"])
        sink.flush()
        let object = try jsonObject(output.lines[0])
        #expect(object["route"] as? String == "/new")
        #expect(object["kept"] as? String == "yes")
    }

    @Test func escaping() throws {
        let message = "say \"hi\" \\ path\nnext line\r\ttab \u{01}\u{1F}\u{7F} é 日本 😀 \u{2028}"
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        jsonLogger(sink).info("\(message)", metadata: ["value": "\(message)", "k\"ey\n": "v"])
        sink.flush()

        let raw = output.text
        #expect(raw.filter { $0 == "\n" }.count == 1)  // only the terminator
        #expect(raw.contains(#"say \"hi\" \\ path\nnext line\r\ttab \u0001\u001f\u007f é 日本 😀"#))
        let object = try jsonObject(output.lines[0])
        #expect(object["message"] as? String == message)
        #expect(object["value"] as? String == message)
        #expect(object["k\"ey\n"] as? String == "v")
    }

    @Test func errorIsIncluded() throws {
        struct Failure: Error, CustomStringConvertible { var description: String { "disk full" } }
        let line = JSONLogHandler.line(
            time: .init(seconds: 0, milliseconds: 0), level: .error, label: "l", message: "m",
            metadata: [:], error: Failure()
        )
        #expect(try jsonObject(String(decoding: line, as: UTF8.self))["error"] as? String == "disk full")
    }

    // MARK: Timestamps

    @Test(arguments: [
        (1_795_341_600, 123, "2026-11-22T10:00:00.123Z"),
        (0, 0, "1970-01-01T00:00:00.000Z"),
        (951_868_799, 999, "2000-02-29T23:59:59.999Z"),
        (4_107_542_400, 7, "2100-03-01T00:00:00.007Z"),
        (-1, 500, "1969-12-31T23:59:59.500Z"),
    ])
    func timestamp(seconds: Int, milliseconds: Int, expected: String) {
        #expect(LogTimestamp.string(.init(seconds: seconds, milliseconds: milliseconds)) == expected)
    }

    @Test func timestampAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var seconds = 0
        while seconds < 4_200_000_000 {
            let ours = LogTimestamp.string(.init(seconds: seconds, milliseconds: 0))
            let foundation = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
            #expect(ours == foundation.replacingOccurrences(of: "Z", with: ".000Z"))
            seconds += 7_654_321
        }
    }

    /// A thread keeps the calendar part of its last second: going back and forth between
    /// seconds, and within one, every stamp is still its own.
    @Test func timestampsOfOneThreadAcrossSeconds() {
        let stamps: [(Int, Int, String)] = [
            (1_795_000_000, 999, "2026-11-18T11:06:40.999Z"), (1_795_000_001, 0, "2026-11-18T11:06:41.000Z"),
            (1_795_000_000, 5, "2026-11-18T11:06:40.005Z"), (1_795_000_000, 42, "2026-11-18T11:06:40.042Z"),
            (0, 0, "1970-01-01T00:00:00.000Z"), (1_795_086_400, 7, "2026-11-19T11:06:40.007Z"),
        ]
        for (seconds, milliseconds, expected) in stamps {
            var line = Array("x".utf8)
            LogTimestamp.append(.init(seconds: seconds, milliseconds: milliseconds), to: &line)
            #expect(String(decoding: line, as: UTF8.self) == "x" + expected)
        }
    }

    @Test func nowIsCurrent() {
        let now = LogTimestamp.now()
        #expect(abs(now.seconds - Int(Date().timeIntervalSince1970)) <= 1)
        #expect((0...999).contains(now.milliseconds))
    }

    // MARK: Text lines

    @Test func textFormatShape() throws {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        textLogger(sink).notice("server started\nfake line", metadata: [
            "port": .stringConvertible(8080), "path": "/a b", "empty": "", "user": ["id": "u1"],
        ])
        sink.flush()
        let lines = output.lines
        try #require(lines.count == 1)
        let pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z notice siwa\.test: server started\\nfake line empty="" path="/a b" port=8080 user=\{"id":"u1"\}$"#
        #expect(lines[0].wholeMatch(of: try Regex(pattern)) != nil, "\(lines[0])")
    }

    // MARK: Sink

    @Test func flushWritesEverythingInOrder() {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        for index in 0..<1_000 { sink.append("line \(index)") }
        #expect(output.text.isEmpty)  // nothing is written on the caller's thread before a flush
        sink.flush()
        #expect(output.lines == (0..<1_000).map { "line \($0)" })
        sink.flush()
        #expect(output.batchCount == 1)  // an empty flush writes nothing
    }

    @Test func backgroundDrainKeepsOrder() async {
        let output = CapturedOutput()
        let sink = LogSink(wakeThreshold: 512, interval: .milliseconds(5), writer: output.writer)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<4 {
                group.addTask {
                    for index in 0..<2_000 { sink.append("w\(writer) \(index)") }
                }
            }
        }
        sink.flush()
        let lines = output.lines
        #expect(lines.count == 8_000)
        for writer in 0..<4 {
            let mine = lines.filter { $0.hasPrefix("w\(writer) ") }
            #expect(mine == (0..<2_000).map { "w\(writer) \($0)" })
        }
    }

    @Test func backgroundThreadWritesWithoutFlush() async throws {
        let output = CapturedOutput()
        let sink = LogSink(interval: .milliseconds(20), writer: output.writer)
        sink.append("tick")
        #expect(try await eventually { !output.lines.isEmpty })
        #expect(output.lines == ["tick"])
    }

    @Test func fullBufferWakesTheWriterEarly() async throws {
        let output = CapturedOutput()
        // An interval far beyond the wait: only the full buffer can have woken the writer.
        let sink = LogSink(wakeThreshold: 100, interval: .seconds(600), writer: output.writer)
        for index in 0..<20 { sink.append("a line long enough to matter \(index)") }
        #expect(try await eventually { !output.lines.isEmpty })
    }

    @Test func overflowDropsAndCountsLines() throws {
        let output = CapturedOutput()
        let sink = LogSink(format: .json, capacity: 100, drainsInBackground: false, writer: output.writer)
        for index in 0..<10 { sink.append("line number \(index).....") }  // 19 bytes with newline
        sink.flush()
        let lines = output.lines
        try #require(lines.count == 6)
        #expect(Array(lines.prefix(5)) == (0..<5).map { "line number \($0)....." })
        let notice = try jsonObject(lines[5])
        #expect(notice["level"] as? String == "warning")
        #expect(notice["dropped_lines"] as? Int == 5)
        #expect((notice["message"] as? String)?.contains("5 log lines were dropped") == true)

        sink.append("after")
        sink.flush()
        #expect(output.lines.last == "after")  // the count starts again, and no notice repeats
    }

    @Test func droppedNoticeFollowsTheTextFormat() {
        let output = CapturedOutput()
        let sink = LogSink(format: .text, capacity: 10, drainsInBackground: false, writer: output.writer)
        sink.append("this line is too long for the buffer")
        sink.flush()
        #expect(output.lines.count == 1)
        #expect(output.lines[0].contains(" warning siwa.log: 1 log line was dropped"))
    }

    // MARK: Per-thread lines (the access log)

    @Test func threadLinesKeepTheirOrderAndStayWhole() async throws {
        let output = CapturedOutput()
        // A low threshold and a short interval: the writer empties the rings while they fill.
        let sink = LogSink(wakeThreshold: 1_024, interval: .milliseconds(1), writer: output.writer)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for thread in 0..<4 {
                group.addTask {
                    try await onOwnThread("log-\(thread)") {
                        for index in 0..<3_000 {
                            sink.appendLine { line in
                                line.append(contentsOf: #"{"thread":\#(thread),"index":\#(index)}"#.utf8)
                            }
                            if index % 700 == 0 { sink.flush() }  // consumers take turns too
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        sink.flush()
        var seen: [[Int]] = Array(repeating: [], count: 4)
        for line in output.lines {
            let object = try jsonObject(line)  // never a torn line
            seen[try #require(object["thread"] as? Int)].append(try #require(object["index"] as? Int))
        }
        #expect(sink.droppedLines == 0)
        for thread in 0..<4 { #expect(seen[thread] == Array(0..<3_000)) }
    }

    @Test func threadLinesWaitForFlush() {
        let output = CapturedOutput()
        let sink = LogSink(drainsInBackground: false, writer: output.writer)
        sink.appendLine { $0.append(contentsOf: "first".utf8) }
        sink.append("other")
        sink.appendLine { $0.append(contentsOf: "second".utf8) }
        #expect(output.text.isEmpty)
        sink.flush()
        // A thread's own lines first, in order; then the shared ones.
        #expect(output.lines == ["first", "second", "other"])
        sink.flush()
        #expect(output.batchCount == 1)
    }

    @Test func aThreadsRingWrapsAroundWithoutTearingALine() {
        let output = CapturedOutput()
        // 100 bytes hold three 30-byte lines; 100 is not a multiple of 30, so lines straddle the end.
        let sink = LogSink(threadCapacity: 100, drainsInBackground: false, writer: output.writer)
        var expected: [String] = []
        for round in 0..<10 {
            for index in 0..<3 {
                let line = "round \(round) line \(index) " + String(repeating: "x", count: 29 - 14 - String(round).count)
                sink.appendLine { $0.append(contentsOf: line.utf8) }
                expected.append(line)
            }
            sink.flush()
        }
        #expect(expected.allSatisfy { $0.utf8.count == 29 })
        #expect(output.lines == expected)
        #expect(sink.droppedLines == 0)
    }

    @Test func blockedWriterDropsAndCountsInsteadOfStalling() async throws {
        let output = CapturedOutput()
        let writerEntered = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        // A writer stuck like a write(2) to a pipe nobody reads, until the test lets it go.
        let sink = LogSink(threadCapacity: 1_000, wakeThreshold: 1, interval: .milliseconds(5)) { batch in
            if !writerEntered.exchange(true, ordering: .relaxed) { release.wait() }
            output.writer(batch)
        }
        let metrics = Metrics()
        metrics.countDroppedLogLines(of: sink)
        let line = #"{"message":"request","n":"0123456789012345678901234567890123456789"}"#  // 68 bytes + newline
        sink.appendLine { $0.append(contentsOf: line.utf8) }
        #expect(try await eventually { writerEntered.load(ordering: .relaxed) })
        // The writer holds the first line; the appending thread's 1,000-byte ring holds 14 more;
        // the rest are dropped. Appending never waits for the writer: this loop ends while the
        // writer is stuck.
        try await onOwnThread {
            for _ in 0..<100 { sink.appendLine { $0.append(contentsOf: line.utf8) } }
        }
        #expect(sink.droppedLines == 100 - 14)
        #expect(await metrics.render().contains("siwa_log_lines_dropped_total 86\n"))

        release.signal()
        sink.flush()
        let lines = output.lines
        // The first line, the ring's 14, and the notice of the drops.
        try #require(lines.count == 16)
        #expect(lines.prefix(15).allSatisfy { $0 == line })  // whole lines only
        let notice = try jsonObject(lines[15])
        #expect(notice["dropped_lines"] as? Int == 86)
        for written in lines { _ = try jsonObject(written) }
    }

    @Test func fileDescriptorWriterWritesEverything() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let payload = [UInt8]((0..<4_000).map { UInt8(truncatingIfNeeded: $0) })
        LogSink.fileDescriptorWriter(fds[1])(payload)
        close(fds[1])
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1_024)
        while true {
            let count = read(fds[0], &chunk, chunk.count)
            if count <= 0 { break }
            received += chunk[0..<count]
        }
        #expect(received == payload)
    }

    // MARK: Fatal reports

    @Test func fatalLineIsOneJSONLine() throws {
        let line = String(decoding: LoggingSetup.fatalLine("configuration error: team_id: bad\nreally", format: .json), as: UTF8.self)
        #expect(line.hasSuffix("\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
        let object = try jsonObject(String(line.dropLast()))
        #expect(object["level"] as? String == "critical")
        #expect(object["message"] as? String == "configuration error: team_id: bad\nreally")
        #expect((object["time"] as? String)?.wholeMatch(of: try Regex(timestampPattern)) != nil)
    }

    @Test(arguments: [LogFormat.text, nil])
    func fatalLineIsOnePlainLine(format: LogFormat?) {
        let line = String(decoding: LoggingSetup.fatalLine("team_id: bad\nreally", format: format), as: UTF8.self)
        #expect(line == "team_id: bad\\nreally\n")
    }
}
