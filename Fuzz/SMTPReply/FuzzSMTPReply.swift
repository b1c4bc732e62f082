// libFuzzer target for the SMTP reply parser (Sources/SMTP/SMTPReplyParser.swift and
// SMTPReply.swift): every byte an SMTP server sends the client goes through it, over TLS or
// not, before any authentication of the server's words.
//
// Limits are made small (lines of 64 bytes, replies of 8 lines) so every limit path is
// reachable with short inputs.
//
// Properties (a violation traps with fatalError, which libFuzzer records as a crash):
//   1. Segmentation does not matter: the input fed whole, in three pieces cut at offsets taken
//      from its bytes, and (up to 1 KiB) one byte at a time, with next() drained after every
//      piece, gives the same replies and ends the same way (the same failure, or waiting with
//      the same unread bytes).
//   2. Replies are well formed: a code of three digits, 200-599; 1 to 8 lines; no line holds
//      an LF, nor more text than a 64-byte line can carry.
//   3. Bounded: while waiting, at most a line's worth of bytes is held unread.
//   4. Replies written back as lines (`code-text`, `code text`) parse to the same replies.
//   5. It agrees with a reference written here line by line (split on LF, one CR dropped,
//      then the same checks in the same order): the same replies and the same ending.

private let maxLineBytes = 64
private let maxLines = 8

private enum Outcome: Equatable {
    case waiting(unread: Int, betweenReplies: Bool)
    case failed(SMTPReplyParser.Failure)
}

private func run(_ pieces: [ArraySlice<UInt8>]) -> ([SMTPReply], Outcome) {
    var parser = SMTPReplyParser(maxLineBytes: maxLineBytes, maxLines: maxLines)
    var replies: [SMTPReply] = []
    for piece in pieces {
        parser.append(piece)
        do {
            while let reply = try parser.next() { replies.append(reply) }
        } catch let failure as SMTPReplyParser.Failure {
            return (replies, .failed(failure))
        } catch {
            fatalError("property violated: an error that is not a Failure: \(error)")
        }
        if parser.unreadByteCount > maxLineBytes + 1 {
            fatalError("property violated: \(parser.unreadByteCount) bytes held unread while waiting")
        }
    }
    return (replies, .waiting(unread: parser.unreadByteCount, betweenReplies: parser.isBetweenReplies))
}

private func check(_ reply: SMTPReply) {
    let digits = String(reply.code)
    guard (200...599).contains(reply.code), digits.utf8.count == 3 else {
        fatalError("property violated: reply code \(reply.code)")
    }
    guard (1...maxLines).contains(reply.lines.count) else {
        fatalError("property violated: \(reply.lines.count) lines")
    }
    for line in reply.lines {
        // Each raw byte after `250 ` decodes to at most one U+FFFD (three UTF-8 bytes).
        guard !line.utf8.contains(0x0A), line.utf8.count <= 3 * (maxLineBytes - 4) else {
            fatalError("property violated: line \(line.debugDescription)")
        }
    }
}

/// The reference: whole input, one line at a time, no buffering.
private func reference(_ bytes: [UInt8]) -> ([SMTPReply], Outcome) {
    var replies: [SMTPReply] = []
    var pendingCode: Int?
    var pendingLines: [String] = []
    var start = 0
    while let lineFeed = bytes[start...].firstIndex(of: 0x0A) {
        var line = bytes[start..<lineFeed]
        start = lineFeed + 1
        if line.last == 0x0D { line = line.dropLast() }
        if line.count > maxLineBytes { return (replies, .failed(.lineTooLong)) }
        let text = String(decoding: line, as: UTF8.self)
        let head = Array(line.prefix(4))
        guard head.count >= 3, (0x32...0x35).contains(head[0]), (0x30...0x39).contains(head[1]), (0x30...0x39).contains(head[2]),
            head.count == 3 || head[3] == 0x20 || head[3] == 0x2D, let code = Int(String(text.prefix(3)))
        else { return (replies, .failed(.malformedLine)) }
        if let pendingCode, pendingCode != code { return (replies, .failed(.codeChanged)) }
        if pendingLines.count == maxLines { return (replies, .failed(.tooManyLines)) }
        pendingCode = code
        pendingLines.append(String(decoding: line.dropFirst(4), as: UTF8.self))
        if head.count == 3 || head[3] == 0x20 {
            replies.append(SMTPReply(code: code, lines: pendingLines))
            pendingCode = nil
            pendingLines = []
        }
    }
    let unread = bytes.count - start
    if unread > maxLineBytes + 1 { return (replies, .failed(.lineTooLong)) }
    return (replies, .waiting(unread: unread, betweenReplies: unread == 0 && pendingCode == nil))
}

private func serialized(_ replies: [SMTPReply]) -> [UInt8] {
    var bytes: [UInt8] = []
    for reply in replies {
        for (index, line) in reply.lines.enumerated() {
            let separator = index == reply.lines.count - 1 ? " " : "-"
            bytes += Array("\(reply.code)\(separator)\(line)\r\n".utf8)
        }
    }
    return bytes
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSMTPReply(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let (replies, outcome) = run([bytes[...]])
    replies.forEach(check)
    let (expected, expectedOutcome) = reference(bytes)
    if expected != replies || expectedOutcome != outcome {
        fatalError("property violated: parser says \(replies) \(outcome), reference says \(expected) \(expectedOutcome)")
    }

    if size >= 3 {
        let first = Int(bytes[0]) % size, second = Int(bytes[1]) % size, last = Int(bytes[size - 1]) % size
        let cuts = [first, second, last].sorted()
        let pieces = [bytes[0..<cuts[0]], bytes[cuts[0]..<cuts[1]], bytes[cuts[1]..<cuts[2]], bytes[cuts[2]...]]
        let (again, againOutcome) = run(pieces)
        if again != replies || againOutcome != outcome {
            fatalError("property violated: in pieces at \(cuts): \(again) \(againOutcome) vs \(replies) \(outcome)")
        }
    }
    if size <= 1024 {
        let (again, againOutcome) = run(bytes.indices.map { bytes[$0...$0] })
        if again != replies || againOutcome != outcome {
            fatalError("property violated: byte by byte: \(again) \(againOutcome) vs \(replies) \(outcome)")
        }
    }

    // Lines written back may be longer than the raw ones (U+FFFD for a stray byte), so the
    // round trip uses roomy limits.
    var reparser = SMTPReplyParser(maxLineBytes: 4 * maxLineBytes, maxLines: maxLines)
    reparser.append(serialized(replies))
    var reparsed: [SMTPReply] = []
    do {
        while let reply = try reparser.next() { reparsed.append(reply) }
    } catch {
        fatalError("property violated: replies written back do not parse: \(error) for \(replies)")
    }
    if reparsed != replies || !reparser.isBetweenReplies {
        fatalError("property violated: round trip gives \(reparsed) for \(replies)")
    }
    return 0
}
