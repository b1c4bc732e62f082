// libFuzzer target for a connection's HTTP rules (Sources/HTTPServer/Server/ConnectionState.swift).
//
// Built by Scripts/fuzz with swiftc together with the rules' sources, so there is no module
// boundary and no Foundation. The input is a script, one operation per byte with its operands
// after it: bytes arrive (whatever they are: heads, bodies, garbage), time passes, deadlines
// are checked, the peer half-closes, the handler answers the request in flight, the socket
// fills or drains, the server stops, the connection fails. After each, the steps are taken as
// `Connection` takes them.
//
// It checks the driver's contract, not just "does not crash":
//   1. No request is handed out (dispatch or refuse) while one is in flight.
//   2. `.write` comes only with output pending and never while the socket is known to be full.
//   3. The sending side is shut at most once; after `.close` the state is closed and gives no
//      further step; `next` settles (reaches `.wait` or `.close`) within a bounded number of steps.
//   4. What is sent is answers: it starts with "HTTP/1.1 " (or the start of it, when the
//      socket took no more).
//   5. The body budget nets to zero: once the connection is over and its last answer reported,
//      every byte it drew is back.
// Any violation traps with fatalError, which libFuzzer records as a crash.

/// Small limits so every refusal (400, 408, 413, 414, 431, the budget's 503) is reachable with
/// inputs of a few hundred bytes.
private let fuzzLimits: HTTPLimits = {
    var limits = HTTPLimits()
    limits.maxHeaderBytes = 512
    limits.maxHeaderFields = 8
    limits.maxRequestLineBytes = 128
    // A body of 1,000 bytes draws on the budget and fits; one of 3,000 does not.
    limits.maxBodyBytes = 4_096
    limits.maxChunkLineBytes = 64
    limits.freeBufferBytes = 256
    limits.bufferedBodyBudget = 2_048
    return limits
}()

private let millisecond: UInt64 = 1_000_000

private struct Script {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    mutating func next() -> UInt8? {
        guard position < bytes.count else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func take(_ count: Int) -> UnsafeBufferPointer<UInt8> {
        let end = min(bytes.count, position + count)
        defer { position = end }
        return UnsafeBufferPointer(rebasing: bytes[position..<end])
    }
}

/// The driver's side: what `Connection` would know and do.
private struct Driver {
    var state: ConnectionState
    let budget: BodyBudget
    var now: UInt64 = 0
    var inFlight: ResponseContext?
    var socketFull = false
    var socketRoom = Int.max
    var sent: [UInt8] = []
    var shutdowns = 0
    var closed = false

    init() {
        budget = BodyBudget(bytes: fuzzLimits.bufferedBodyBudget)
        state = ConnectionState(remoteAddress: "192.0.2.1", timeouts: HTTPTimeouts(), limits: fuzzLimits, budget: budget, now: 0)
    }

    mutating func answer(bodyBytes: Int) {
        guard let context = inFlight else { return }
        inFlight = nil
        _ = state.responded(HTTPResponse(body: [UInt8](repeating: 0x61, count: bodyBytes)), context: context, now: now, date: "-", stopping: false)
    }

    /// Takes steps until the state waits, answering refusals at once and leaving a dispatched
    /// request in flight for the script to answer.
    mutating func drive() {
        for _ in 0..<10_000 {
            switch state.next(now: now) {
            case .dispatch(_, let context):
                guard inFlight == nil, !closed else { fatalError("a request was handed out while one was in flight") }
                inFlight = context
            case .refuse(let refusal, let context):
                guard inFlight == nil, !closed else { fatalError("a refusal was handed out while a request was in flight") }
                _ = state.responded(refusal.plainTextResponse, context: context, now: now, date: "-", stopping: false)
            case .write:
                guard state.hasPendingOutput else { fatalError(".write without output") }
                guard !socketFull else { fatalError(".write while the socket is full") }
                let chunk = state.withPendingOutput { Array($0.prefix(socketRoom)) }
                sent += chunk
                if socketRoom != .max { socketRoom -= chunk.count }
                if !chunk.isEmpty { state.wrote(chunk.count, now: now) }
                if state.hasPendingOutput {
                    socketFull = true
                    state.writeBlocked(now: now)
                }
            case .shutdownWrite:
                shutdowns += 1
                guard shutdowns == 1 else { fatalError("the sending side was shut twice") }
            case .close:
                guard state.isClosed else { fatalError(".close from a state that is not closed") }
                closed = true
                guard case .wait = state.next(now: now) else { fatalError("a step after .close") }
                return
            case .wait:
                return
            }
        }
        fatalError("next() did not settle")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConnection(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var script = Script(bytes: UnsafeBufferPointer(start: data, count: size))
    var driver = Driver()
    while !driver.closed, let operation = script.next() {
        let operand = Int(script.next() ?? 0)
        switch operation % 9 {
        case 0, 1:
            // Bytes arrive: the operand says how many of the script's next bytes.
            let bytes = script.take(operand + 1)
            driver.state.received(UnsafeRawBufferPointer(bytes), now: driver.now)
        case 2:
            // Time passes: up to about 65 s, in steps the deadlines (1-60 s) fall between.
            driver.now += UInt64(operand) * 256 * millisecond
            if driver.state.tick(now: driver.now) { driver.drive() }
            continue
        case 3:
            driver.state.peerClosed()
        case 4:
            driver.answer(bodyBytes: operand * 16)
        case 5:
            // The socket takes only so much more from now on (255: no limit).
            driver.socketRoom = operand == 255 ? .max : operand * 8
        case 6:
            driver.socketFull = false
            driver.state.writable()
        case 7:
            if !driver.state.serverStopping() { continue }
        default:
            // The read or write failed: the connection ends without a step.
            if operand % 4 == 0 {
                driver.state.abort()
                driver.closed = true
            }
        }
        driver.drive()
    }
    // A full socket may have taken only the start of the first answer.
    let answerStart = Array("HTTP/1.1 ".utf8)
    if !driver.sent.starts(with: answerStart), !answerStart.starts(with: driver.sent) {
        fatalError("what was sent does not start with an answer: \(String(decoding: driver.sent.prefix(60), as: UTF8.self).debugDescription)")
    }
    // The end of the connection: a handler still holding a request answers late.
    driver.state.abort()
    driver.answer(bodyBytes: 0)
    guard driver.budget.bytesLeft == fuzzLimits.bufferedBodyBudget else {
        fatalError("the body budget did not net to zero: \(driver.budget.bytesLeft) of \(fuzzLimits.bufferedBodyBudget) left")
    }
    return 0
}
