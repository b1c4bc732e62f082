/// The HTTP/1.1 rules of one connection, with no I/O and no clock: what arrived, what the
/// responder answered, what was written, and the time, go in; what to do next comes out of
/// `next(now:)`. `Connection` does the syscalls and reads the clock; tests drive this value
/// with the times they choose, so every deadline is checked to the nanosecond without waiting.
///
/// Requests are answered one at a time in arrival order: bytes of pipelined requests wait in
/// the parser until the answer before them is queued, which keeps answers in order without a
/// reordering buffer.
struct ConnectionState {
    /// What the connection does next.
    enum Step {
        /// A whole request to answer; report the answer with `responded`. Nothing more is read
        /// from the parser until then.
        case dispatch(HTTPRequest, ResponseContext)
        /// The connection refuses what it received (unreadable, too slow, over the budget):
        /// answer with the responder's refusal and report it with `responded`; the connection
        /// closes after it.
        case refuse(HTTPRefusal, ResponseContext)
        /// `pendingOutput` holds bytes to send; report with `wrote` or `writeBlocked`.
        case write
        /// Shut the sending side (the answer is complete; unread input drains a while).
        case shutdownWrite
        /// Close the descriptor. The state is closed already and gives no further step.
        case close
        /// Nothing until the next input or deadline.
        case wait
    }

    private enum DeadlineAction {
        /// Nothing of a request had arrived: just close.
        case plainClose
        /// A request had begun: answer 408, then close.
        case requestTimeout
        case close
    }

    let remoteAddress: String
    private let timeouts: HTTPTimeouts
    private let limits: HTTPLimits
    private let budget: BodyBudget
    private var parser: RequestParser

    private(set) var output: [UInt8] = []
    private var outputSent = 0

    private(set) var inFlight = false
    private var closeWhenFlushed = false
    private var lingering = false
    private var peerClosedInput = false
    private var sentContinue = false
    /// Set by `writeBlocked`, cleared by `writable`: no `.write` step while the socket is full.
    private var writeBlocked = false
    private var refusal: HTTPRefusal?
    private var closePending = false
    private(set) var isClosed = false

    private let acceptedAt: UInt64
    private var requestBegan: UInt64
    private var lastReadAt: UInt64
    private var lastWriteProgress: UInt64 = 0
    private var lastResponseAt: UInt64 = 0
    private var servedRequests = 0
    private var deadline: UInt64 = .max
    private var deadlineAction = DeadlineAction.plainClose
    /// When the current request's head completed with a body still to come; nil otherwise.
    private var bodyStartedAt: UInt64?
    /// Bytes of the server's body budget this connection holds.
    private var reservedBodyBytes = 0
    /// Allocated capacity of the body handed to the handler, held until its response.
    private var inFlightBodyCapacity = 0

    init(remoteAddress: String, timeouts: HTTPTimeouts, limits: HTTPLimits, budget: BodyBudget, now: UInt64) {
        self.remoteAddress = remoteAddress
        self.timeouts = timeouts
        self.limits = limits
        self.budget = budget
        parser = RequestParser(limits: limits)
        acceptedAt = now
        requestBegan = now
        lastReadAt = now
        refreshDeadline()
    }

    var hasPendingOutput: Bool { outputSent < output.count }

    /// Whether to watch the socket for input: not once the peer closed its side, nor while a
    /// handler holds a request and 64 KiB more wait, nor while 256 KiB of answers are unsent.
    var wantsInput: Bool {
        let paused = (inFlight && parser.bufferedByteCount >= 64 * 1024) || output.count - outputSent >= 256 * 1024
        return !peerClosedInput && !paused
    }

    /// The bytes `.write` sends, from the first not yet sent.
    func withPendingOutput<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        output.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[outputSent...])) }
    }

    // MARK: Inputs

    /// Bytes read from the socket.
    mutating func received(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        guard !isClosed, !lingering else { return }
        if servedRequests > 0, !inFlight, !parser.hasPartialRequest { requestBegan = now }
        lastReadAt = now
        parser.append(bytes)
        // While a handler holds a request, its body's share is settled when it answers.
        if !inFlight, !chargeBudgetForHeldMemory() { refusal = refusal ?? .busy }
    }

    /// The peer closed its sending side: whole requests still buffered are answered, then the
    /// connection closes.
    mutating func peerClosed() {
        guard !isClosed else { return }
        peerClosedInput = true
        if lingering, !inFlight, !hasPendingOutput { closePending = true }
    }

    /// The answer to the request of the last `.dispatch` or `.refuse`, queued as output; the
    /// access record to report (complete but for what the responder adds).
    mutating func responded(
        _ response: HTTPResponse, context: ResponseContext, now: UInt64, date: @autoclosure () -> String, stopping: @autoclosure () -> Bool
    ) -> AccessRecord {
        inFlight = false
        inFlightBodyCapacity = 0
        // Gives back the body's share. Should input read meanwhile need more than is left, the
        // next step refuses it.
        _ = chargeBudgetForHeldMemory()
        var record = context.record
        record.route = response.route
        record.status = response.status
        record.durationSeconds = Double(now > context.started ? now - context.started : 0) / 1e9
        guard !isClosed else { return record }
        var encoding = context.encoding
        // A half-closed client hears `close` with its last buffered request's answer.
        encoding.keepAlive = encoding.keepAlive && !stopping() && (!peerClosedInput || parser.hasPartialRequest)
        encoding.date = date()
        record.responseBytes = ResponseEncoder.encode(response, context: encoding, into: &output)
        servedRequests += 1
        lastResponseAt = now
        if !encoding.keepAlive { closeWhenFlushed = true }
        return record
    }

    /// `count` bytes of the pending output were sent.
    mutating func wrote(_ count: Int, now: UInt64) {
        outputSent += count
        lastWriteProgress = now
        if outputSent >= output.count {
            output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
            outputSent = 0
        }
    }

    /// The socket took no more: the write-progress deadline runs from the last byte it took (or
    /// from this answer, when it took none of it).
    mutating func writeBlocked(now: UInt64) {
        writeBlocked = true
        if lastWriteProgress < lastResponseAt { lastWriteProgress = now }
        refreshDeadline()
    }

    /// The socket can take output again.
    mutating func writable() {
        writeBlocked = false
    }

    /// Checks the deadlines at `now`; true when that gave a step to take (`next`).
    mutating func tick(now: UInt64) -> Bool {
        guard !isClosed else { return false }
        if isBodyTooSlow(now: now) {
            refusal = refusal ?? .requestTimeout("the request body arrived too slowly")
            return true
        }
        if now >= deadline {
            switch deadlineAction {
            case .plainClose, .close:
                closePending = true
            case .requestTimeout:
                refusal = refusal ?? .requestTimeout("the request did not arrive in time")
            }
            return true
        }
        // Idle connections give their buffers back: thousands of them must stay cheap.
        if !inFlight, !hasPendingOutput, !parser.hasPartialRequest {
            parser.shrinkIfEmpty()
            _ = chargeBudgetForHeldMemory()
            if output.capacity > 0 { output = [] }
        }
        return false
    }

    /// The server stops: an idle connection closes now (true: take `next`); a busy one after
    /// its answer, which says `close`.
    mutating func serverStopping() -> Bool {
        guard !isClosed, !inFlight, !hasPendingOutput, !parser.isReceivingBody else { return false }
        closePending = true
        return true
    }

    /// The connection ends without a step (a read or write failed, or the stop's deadline
    /// passed): what it held is given back, but a body in flight keeps its share until its
    /// handler answers.
    mutating func abort() {
        guard !isClosed else { return }
        isClosed = true
        parser.discardAll()
        _ = chargeBudgetForHeldMemory()
    }

    // MARK: Steps

    /// What to do now. Call it until `.wait` (or `.close`) after every input.
    mutating func next(now: UInt64) -> Step {
        guard !isClosed else { return .wait }
        if closePending { return closeNow() }
        if let refusal {
            self.refusal = nil
            return refuse(refusal, now: now)
        }
        if hasPendingOutput {
            if !writeBlocked { return .write }
        } else if closeWhenFlushed {
            // Lingering: `peerClosed` or the linger's deadline ends it.
            return lingering ? .wait : startLinger(now: now)
        }
        while !inFlight, !closeWhenFlushed {
            let event: RequestParser.Event?
            do {
                event = try parser.next()
            } catch {
                return refuse(HTTPRefusal(error), now: now)
            }
            if case .request(_, let body) = event { inFlightBodyCapacity = body.capacity }
            // Growing a body allocates before it can be charged; refused, the parser's memory
            // is given back at once, so the budget is overdrawn for no longer than this.
            guard chargeBudgetForHeldMemory() else {
                inFlightBodyCapacity = 0
                return refuse(.busy, now: now)
            }
            guard let event else { break }
            switch event {
            case .head(let head):
                bodyStartedAt = now
                if head.expectsContinue, !sentContinue {
                    sentContinue = true
                    output.append(contentsOf: ResponseEncoder.continueResponse)
                    if !writeBlocked { return .write }
                }
            case .request(let head, let body):
                sentContinue = false
                bodyStartedAt = nil
                return dispatch(head, body: body, now: now)
            }
        }
        // Half-closed and nothing whole left to answer: what remains can never complete.
        if peerClosedInput, !inFlight, !closeWhenFlushed {
            guard hasPendingOutput else { return closeNow() }
            closeWhenFlushed = true
        }
        refreshDeadline()
        return .wait
    }

    private mutating func dispatch(_ head: HTTPRequestHead, body: [UInt8], now: UInt64) -> Step {
        inFlight = true
        let requestID = head.headers["X-Request-Id"].flatMap { RequestID.isValid($0) ? $0 : nil } ?? RequestID.make()
        let context = ResponseContext(
            encoding: ResponseEncoder.Context(
                version: head.version, keepAlive: head.keepAlive, isHead: head.method == .head,
                acceptsGzip: Gzip.isAccepted(by: head.headers["Accept-Encoding"]), requestID: requestID),
            record: AccessRecord(
                method: head.method.rawValue, path: head.path, requestBytes: body.count, requestID: requestID,
                remoteAddress: remoteAddress, forwardedFor: head.headers.combinedValue("X-Forwarded-For")),
            started: now)
        refreshDeadline()
        return .dispatch(HTTPRequest(head: head, body: body, requestID: requestID, remoteAddress: remoteAddress), context)
    }

    private mutating func refuse(_ refusal: HTTPRefusal, now: UInt64) -> Step {
        // No further request is read: what was received goes now, not after the linger.
        parser.discardAll()
        let requestID = RequestID.make()
        let context = ResponseContext(
            encoding: ResponseEncoder.Context(version: .http1_1, keepAlive: false, isHead: false, acceptsGzip: false, requestID: requestID),
            record: AccessRecord(method: "-", path: "-", requestBytes: 0, requestID: requestID, remoteAddress: remoteAddress, forwardedFor: nil),
            started: now)
        inFlight = true
        refreshDeadline()
        return .refuse(refusal, context)
    }

    /// Half-closes and drains input for a short while, so the client reads the answer instead
    /// of a reset caused by bytes it sent that were never read.
    private mutating func startLinger(now: UInt64) -> Step {
        lingering = true
        if peerClosedInput {
            closePending = true
        } else {
            deadline = now &+ timeouts.linger.nanoseconds
            deadlineAction = .close
        }
        return .shutdownWrite
    }

    private mutating func closeNow() -> Step {
        abort()
        return .close
    }

    // MARK: Deadlines

    private mutating func refreshDeadline() {
        if lingering { return }
        if hasPendingOutput {
            deadline = lastWriteProgress &+ timeouts.writeProgress.nanoseconds
            deadlineAction = .close
        } else if inFlight {
            deadline = .max
        } else if parser.isReceivingBody {
            deadline = lastReadAt &+ timeouts.bodyProgress.nanoseconds
            deadlineAction = .requestTimeout
        } else if parser.hasPartialRequest {
            deadline = requestBegan &+ timeouts.header.nanoseconds
            deadlineAction = .requestTimeout
        } else if servedRequests == 0 {
            deadline = acceptedAt &+ timeouts.header.nanoseconds
            deadlineAction = .plainClose
        } else {
            deadline = lastResponseAt &+ timeouts.idle.nanoseconds
            deadlineAction = .plainClose
        }
    }

    // MARK: Limits

    /// A body that has had its grace period must have averaged the minimum rate since: a
    /// trickle of a byte every few seconds keeps resetting `bodyProgress`, but not this.
    private func isBodyTooSlow(now: UInt64) -> Bool {
        guard let bodyStartedAt, !inFlight, parser.isReceivingBody else { return false }
        let grace = timeouts.bodyGrace.nanoseconds
        guard now > bodyStartedAt &+ grace else { return false }
        let elapsed = now - bodyStartedAt - grace
        let required = elapsed.multipliedReportingOverflow(by: UInt64(limits.minBodyBytesPerSecond))
        return !required.overflow && UInt64(parser.heldByteCount) < required.partialValue / 1_000_000_000
    }

    /// The memory this connection holds for requests: the parser's buffers and the body in
    /// flight, by allocated capacity (bytes received understate it).
    private var heldMemory: Int { parser.heldCapacity + inFlightBodyCapacity }

    /// Makes this connection's share of the server's body budget what it holds beyond the free
    /// allowance, drawing more or giving some back; false (and nothing drawn) when the budget
    /// cannot cover it.
    private mutating func chargeBudgetForHeldMemory() -> Bool {
        let needed = max(0, heldMemory - limits.freeBufferBytes)
        if needed > reservedBodyBytes {
            guard budget.reserve(needed - reservedBodyBytes) else { return false }
        } else if needed < reservedBodyBytes {
            budget.release(reservedBodyBytes - needed)
        }
        reservedBodyBytes = needed
        return true
    }

    /// What this connection holds for requests and how much of the budget it has drawn.
    var memory: Memory {
        Memory(receivedBytes: parser.heldByteCount, heldBytes: heldMemory, reservedBytes: reservedBodyBytes)
    }

    struct Memory: Sendable {
        /// Bytes of the request being received that have arrived.
        var receivedBytes: Int
        /// Allocated capacity of the parser's buffers and of the body in flight.
        var heldBytes: Int
        /// Bytes of the server's body budget drawn.
        var reservedBytes: Int
    }
}

/// What a response needs of its request once the responder is done: how to encode it, and
/// the access record as far as the request alone can fill it.
struct ResponseContext: Sendable {
    var encoding: ResponseEncoder.Context
    var record: AccessRecord
    var started: UInt64
}
