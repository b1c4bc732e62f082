import Testing
@testable import HTTPServer

/// A connection's HTTP rules (ConnectionState) with the time the test chooses: every deadline
/// to the nanosecond, pipelining and half-close, the linger, the body budget, with no socket and
/// no waiting. TimeoutTests keeps samples of the same rules over real sockets.
@Suite struct ConnectionStateTests {
    static let second: UInt64 = 1_000_000_000
    static let start: UInt64 = 1_000 * second

    /// A connection and what it did: the steps as words, and the bytes it sent.
    final class Harness {
        var state: ConnectionState
        var sent: [UInt8] = []
        var log: [String] = []
        /// How many more bytes the "socket" takes before it is full; nil: all of them.
        var socketRoom: Int?
        /// How the "responder" answers a request; a 200 naming its path by default.
        var answer: (HTTPRequest) -> HTTPResponse = { .json(200, #"{"path":"\#($0.path)"}"#) }
        var stopping = false

        init(timeouts: HTTPTimeouts = HTTPTimeouts(), limits: HTTPLimits = HTTPLimits(), budget: BodyBudget = BodyBudget(bytes: 64 << 20)) {
            state = ConnectionState(remoteAddress: "192.0.2.7", timeouts: timeouts, limits: limits, budget: budget, now: ConnectionStateTests.start)
        }

        var text: String { String(decoding: sent, as: UTF8.self) }

        func receive(_ text: String, at now: UInt64) {
            Array(text.utf8).withUnsafeBytes { state.received($0, now: now) }
        }

        /// Takes steps until the state waits or closes, answering dispatches at once.
        func run(at now: UInt64) {
            while true {
                switch state.next(now: now) {
                case .dispatch(let request, let context):
                    log.append("dispatch \(request.path)")
                    _ = state.responded(answer(request), context: context, now: now, date: "Fri, 27 Nov 2026 18:00:00 GMT", stopping: stopping)
                case .refuse(let refusal, let context):
                    log.append("refuse \(refusal.status)")
                    _ = state.responded(refusal.plainTextResponse, context: context, now: now, date: "Fri, 27 Nov 2026 18:00:00 GMT", stopping: stopping)
                case .write:
                    let bytes = state.withPendingOutput { Array($0.prefix(socketRoom ?? .max)) }
                    sent += bytes
                    if let room = socketRoom { socketRoom = room - bytes.count }
                    if !bytes.isEmpty { state.wrote(bytes.count, now: now) }
                    if state.hasPendingOutput {
                        log.append("write blocked")
                        state.writeBlocked(now: now)
                    } else {
                        log.append("write")
                    }
                case .shutdownWrite:
                    log.append("shutdown")
                case .close:
                    log.append("close")
                    return
                case .wait:
                    return
                }
            }
        }

        /// Whether the deadlines at `now` give a step to take.
        func tick(at now: UInt64) -> Bool { state.tick(now: now) }
        func serverStopping() -> Bool { state.serverStopping() }

        /// The log since the last call.
        func take() -> [String] {
            defer { log = [] }
            return log
        }
    }

    // MARK: Deadlines

    @Test func aConnectionThatSendsNothingIsClosedAtTheHeaderDeadlineWithoutAnAnswer() {
        let harness = Harness()
        let deadline = Self.start + 10 * Self.second
        #expect(!harness.tick(at: deadline - 1))
        #expect(harness.tick(at: deadline))
        harness.run(at: deadline)
        #expect(harness.take() == ["close"])
        #expect(harness.sent.isEmpty)
        #expect(harness.state.isClosed)
    }

    @Test func aHeadThatNeverEndsGets408AtTheHeaderDeadlineThenLingers() {
        let harness = Harness()
        harness.receive("GET /hello HTTP/1.1\r\nHost: t\r\n", at: Self.start + Self.second)
        harness.run(at: Self.start + Self.second)
        #expect(harness.take().isEmpty)
        // The header deadline counts from the connection's start, not from the first byte.
        let deadline = Self.start + 10 * Self.second
        #expect(!harness.tick(at: deadline - 1))
        #expect(harness.tick(at: deadline))
        harness.run(at: deadline)
        #expect(harness.take() == ["refuse 408", "write", "shutdown"])
        #expect(harness.text.hasPrefix("HTTP/1.1 408 "))
        #expect(harness.text.contains("Connection: close\r\n"))
        // Input still drains for the linger (2 s), then the connection closes.
        harness.receive("X-Late: 1\r\n", at: deadline + 1)
        #expect(!harness.tick(at: deadline + 2 * Self.second - 1))
        #expect(harness.tick(at: deadline + 2 * Self.second))
        harness.run(at: deadline + 2 * Self.second)
        #expect(harness.take() == ["close"])
    }

    @Test func aTrickledHeadIsCutOffEvenWhileBytesKeepComing() {
        let harness = Harness()
        harness.receive("GET /hello HTTP/1.1\r\n", at: Self.start)
        // A header line every 100 ms: progress does not move the header deadline.
        var now = Self.start
        for index in 0..<99 {
            now += Self.second / 10
            harness.receive("X-\(index): v\r\n", at: now)
            harness.run(at: now)
            #expect(!harness.tick(at: now))
        }
        now = Self.start + 10 * Self.second
        #expect(harness.tick(at: now))
        harness.run(at: now)
        #expect(harness.take() == ["refuse 408", "write", "shutdown"])
    }

    @Test func anIdleKeepAliveConnectionClosesQuietlyAfterTheIdleTimeout() {
        let harness = Harness()
        let answered = Self.start + 3 * Self.second
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n", at: answered)
        harness.run(at: answered)
        #expect(harness.take() == ["dispatch /a", "write"])
        let sentBefore = harness.sent.count
        #expect(!harness.tick(at: answered + 60 * Self.second - 1))
        #expect(harness.tick(at: answered + 60 * Self.second))
        harness.run(at: answered + 60 * Self.second)
        #expect(harness.take() == ["close"])
        #expect(harness.sent.count == sentBefore)
    }

    @Test func aSecondRequestsHeadDeadlineCountsFromItsFirstByte() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        harness.run(at: Self.start)
        let begun = Self.start + 30 * Self.second
        harness.receive("GET /b HTTP/1.1\r\n", at: begun)
        harness.run(at: begun)
        #expect(!harness.tick(at: begun + 10 * Self.second - 1))
        #expect(harness.tick(at: begun + 10 * Self.second))
        harness.run(at: begun + 10 * Self.second)
        #expect(harness.take() == ["dispatch /a", "write", "refuse 408", "write", "shutdown"])
    }

    @Test func aStalledBodyGets408AfterTheBodyProgressTimeout() {
        let harness = Harness()
        let stalled = Self.start + Self.second
        harness.receive("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc", at: stalled)
        harness.run(at: stalled)
        #expect(!harness.tick(at: stalled + 10 * Self.second - 1))
        #expect(harness.tick(at: stalled + 10 * Self.second))
        harness.run(at: stalled + 10 * Self.second)
        #expect(harness.take() == ["refuse 408", "write", "shutdown"])
        #expect(harness.text.contains("arrive in time"))
    }

    @Test func aBodyTrickledUnderTheMinimumRateGets408OnceItsGraceIsOver() {
        var timeouts = HTTPTimeouts()
        timeouts.bodyProgress = .seconds(5)
        let harness = Harness(timeouts: timeouts)
        harness.receive("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n", at: Self.start)
        harness.run(at: Self.start)
        // A byte every 4 s never lets the 5 s progress timeout pass.
        var now = Self.start
        var refusedAt: UInt64?
        while refusedAt == nil, now < Self.start + 60 * Self.second {
            now += 4 * Self.second
            harness.receive("x", at: now)
            harness.run(at: now)
            if harness.tick(at: now) { refusedAt = now }
        }
        // The grace is 10 s; then 1,024 bytes a second are owed: at 12 s, 4 bytes against 2,048.
        #expect(refusedAt == Self.start + 12 * Self.second)
        harness.run(at: now)
        #expect(harness.take() == ["refuse 408", "write", "shutdown"])
        #expect(harness.text.contains("too slowly"))
    }

    /// A connection whose 100,000-byte answer, queued at the start, filled the socket after
    /// 30,000 bytes.
    static func blockedOnAHugeAnswer() -> Harness {
        let harness = Harness()
        harness.answer = { _ in HTTPResponse(body: [UInt8](repeating: 65, count: 100_000)) }
        harness.socketRoom = 30_000
        harness.receive("GET /huge HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        harness.run(at: Self.start)
        #expect(harness.take() == ["dispatch /huge", "write blocked"])
        return harness
    }

    @Test func aClientThatStopsReadingIsCutOffAfterTheWriteProgressTimeout() {
        let harness = Self.blockedOnAHugeAnswer()
        // The deadline runs from the last byte taken.
        harness.state.writable()
        harness.socketRoom = 1_000
        let progress = Self.start + 5 * Self.second
        harness.run(at: progress)
        #expect(harness.take() == ["write blocked"])
        #expect(!harness.tick(at: progress + 10 * Self.second - 1))
        #expect(harness.tick(at: progress + 10 * Self.second))
        harness.run(at: progress + 10 * Self.second)
        #expect(harness.take() == ["close"])
        #expect(harness.sent.count == 31_000)
    }

    @Test func onceABlockedAnswerIsOutTheIdleTimeoutAppliesNotTheWriteProgressOne() {
        let harness = Self.blockedOnAHugeAnswer()
        harness.socketRoom = nil
        harness.state.writable()
        harness.run(at: Self.start + Self.second)
        #expect(harness.take() == ["write"])
        // The answer was queued at the start: idle from then, 60 s; the write-progress deadline
        // of the blocked write (10 s) no longer holds.
        #expect(!harness.tick(at: Self.start + 11 * Self.second))
        #expect(!harness.tick(at: Self.start + 60 * Self.second - 1))
        #expect(harness.tick(at: Self.start + 60 * Self.second))
        harness.run(at: Self.start + 60 * Self.second)
        #expect(harness.take() == ["close"])
    }

    @Test func noWriteIsTriedWhileTheSocketIsFullUntilItIsWritableAgain() {
        let harness = Harness()
        harness.socketRoom = 0
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        harness.run(at: Self.start)
        #expect(harness.take() == ["dispatch /a", "write blocked"])
        harness.run(at: Self.start + 1)
        #expect(harness.take().isEmpty)
        harness.socketRoom = nil
        harness.state.writable()
        harness.run(at: Self.start + 2)
        #expect(harness.take() == ["write"])
        #expect(harness.text.hasPrefix("HTTP/1.1 200 "))
    }

    // MARK: Requests

    @Test func pipelinedRequestsAreAnsweredInOrderOneAtATime() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        // The first is handed out; the second waits in the parser until the first is answered.
        guard case .dispatch(let first, let context) = harness.state.next(now: Self.start) else {
            Issue.record("the first request was not dispatched")
            return
        }
        #expect(first.path == "/a")
        #expect(harness.state.inFlight)
        guard case .wait = harness.state.next(now: Self.start) else {
            Issue.record("a second request was dispatched while the first was in flight")
            return
        }
        _ = harness.state.responded(.json(200, "{}"), context: context, now: Self.start, date: "-", stopping: false)
        harness.run(at: Self.start)
        #expect(harness.take() == ["write", "dispatch /b", "write"])
        #expect(harness.text.components(separatedBy: "HTTP/1.1 200 ").count == 3)
    }

    @Test func aHalfClosedClientsBufferedRequestsAreAllAnsweredTheLastSayingClose() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        harness.state.peerClosed()
        harness.run(at: Self.start)
        #expect(harness.take() == ["dispatch /a", "write", "dispatch /b", "write", "shutdown", "close"])
        let answers = harness.text.components(separatedBy: "HTTP/1.1 200 ").dropFirst()
        #expect(answers.map { $0.contains("Connection: close\r\n") } == [false, true])
    }

    @Test func aHalfClosedClientsTruncatedRequestClosesTheConnectionAtOnce() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHo", at: Self.start)
        harness.state.peerClosed()
        harness.run(at: Self.start)
        #expect(harness.take() == ["dispatch /a", "write", "close"])
    }

    @Test func anUnreadableRequestIsRefusedAndNothingAfterItIsRead() {
        let harness = Harness()
        harness.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\nNOT HTTP\r\n\r\nGET /c HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        harness.run(at: Self.start)
        #expect(harness.take() == ["dispatch /a", "write", "refuse 400", "write", "shutdown"])
        harness.receive("GET /d HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start + 1)
        harness.run(at: Self.start + 1)
        #expect(harness.take().isEmpty)
    }

    @Test func expectContinueGets100BeforeTheBodyAndOnlyOnce() {
        let harness = Harness()
        harness.receive("POST /echo HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n", at: Self.start)
        harness.run(at: Self.start)
        #expect(harness.take() == ["write"])
        #expect(harness.text == "HTTP/1.1 100 Continue\r\n\r\n")
        harness.receive("ab", at: Self.start + 1)
        harness.run(at: Self.start + 1)
        #expect(harness.take().isEmpty)
        harness.receive("cd", at: Self.start + 2)
        harness.run(at: Self.start + 2)
        #expect(harness.take() == ["dispatch /echo", "write"])
    }

    // MARK: The body budget

    @Test func aBodyPastTheBudgetIsRefusedWith503AndItsShareComesBack() {
        let budget = BodyBudget(bytes: 100_000)
        let harness = Harness(budget: budget)
        harness.receive("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 400000\r\n\r\n", at: Self.start)
        harness.receive(String(repeating: "x", count: 50_000), at: Self.start + 1)
        harness.run(at: Self.start + 1)
        // Past the free 20 KiB the body draws on the budget.
        let drawn = 100_000 - budget.bytesLeft
        #expect(drawn > 0)
        #expect(harness.take().isEmpty)
        harness.receive(String(repeating: "x", count: 150_000), at: Self.start + 2)
        harness.run(at: Self.start + 2)
        #expect(harness.take() == ["refuse 503", "write", "shutdown"])
        #expect(harness.text.contains("busy"))
        // Refused, the buffered body is dropped and its share given back before the linger.
        #expect(budget.bytesLeft == 100_000)
        harness.state.peerClosed()
        harness.run(at: Self.start + 3)
        #expect(harness.take() == ["close"])
        #expect(budget.bytesLeft == 100_000)
    }

    @Test func aRequestInFlightKeepsItsBodysShareUntilItIsAnsweredEvenAfterAClose() {
        let budget = BodyBudget(bytes: 1 << 20)
        let harness = Harness(budget: budget)
        let body = String(repeating: "x", count: 100_000)
        harness.receive("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" + body, at: Self.start)
        guard case .dispatch(_, let context) = harness.state.next(now: Self.start) else {
            Issue.record("the request was not dispatched")
            return
        }
        #expect(budget.bytesLeft < 1 << 20)
        harness.state.abort()
        #expect(budget.bytesLeft < 1 << 20)
        _ = harness.state.responded(.json(200, "{}"), context: context, now: Self.start, date: "-", stopping: false)
        #expect(budget.bytesLeft == 1 << 20)
        #expect(harness.state.output.isEmpty)
    }

    // MARK: Stopping

    @Test func aStoppingServerClosesAnIdleConnectionAndSaysCloseToABusyOne() {
        let idle = Harness()
        #expect(idle.serverStopping())
        idle.run(at: Self.start)
        #expect(idle.take() == ["close"])

        let busy = Harness()
        busy.receive("GET /a HTTP/1.1\r\nHost: t\r\n\r\n", at: Self.start)
        guard case .dispatch(_, let context) = busy.state.next(now: Self.start) else {
            Issue.record("the request was not dispatched")
            return
        }
        #expect(!busy.serverStopping())
        _ = busy.state.responded(.json(200, "{}"), context: context, now: Self.start, date: "-", stopping: true)
        busy.run(at: Self.start)
        #expect(busy.take() == ["write", "shutdown"])
        #expect(busy.text.contains("Connection: close\r\n"))
    }
}
