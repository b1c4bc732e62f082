import CSystem
import Glibc

/// One client connection, owned by one event loop and touched only on its thread.
///
/// Requests are handled one at a time in arrival order; bytes of pipelined requests wait in the
/// parser until the response before them is queued, which keeps responses in order without
/// any reordering buffer.
final class Connection {
    private enum DeadlineAction {
        /// Nothing of a request had arrived: just close.
        case plainClose
        /// A request had begun: answer 408, then close.
        case requestTimeout
        case close
    }

    let fd: Int32
    /// The peer's IP address, as the socket says.
    let remoteAddress: String
    /// The client this connection counts against for the per-client cap; nil when exempt.
    let countedAs: ClientKey?
    private unowned let loop: EventLoop
    private var parser: RequestParser

    private var output: [UInt8] = []
    private var outputSent = 0
    private var registeredEvents = EPOLLIN.rawValue | EPOLLRDHUP.rawValue

    private var inFlight = false
    /// True while `processInput` runs, so a response completed synchronously inside it does
    /// not recurse into it.
    private var processing = false
    /// Requests answered at once in this `processInput` pass (see `maxImmediateAnswersInARow`).
    private var immediateAnswersInARow = 0
    private var closeWhenFlushed = false
    private var lingering = false
    private var peerClosedInput = false
    private var sentContinue = false
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

    init(fd: Int32, remoteAddress: String, countedAs: ClientKey?, loop: EventLoop, now: UInt64) {
        self.fd = fd
        self.remoteAddress = remoteAddress
        self.countedAs = countedAs
        self.loop = loop
        self.parser = RequestParser(limits: loop.server.configuration.limits)
        acceptedAt = now
        requestBegan = now
        lastReadAt = now
        refreshDeadline()
    }

    private var timeouts: HTTPTimeouts { loop.server.configuration.timeouts }
    private var limits: HTTPLimits { loop.server.configuration.limits }
    private var hasPendingOutput: Bool { outputSent < output.count }

    // MARK: Events

    func handle(events: UInt32) {
        guard !isClosed else { return }
        if events & EPOLLOUT.rawValue != 0 { flush() }
        if !isClosed, events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            readAvailable()
        }
        if !isClosed { updateInterest() }
    }

    private func readAvailable() {
        let count = read(fd, loop.readBuffer.baseAddress, loop.readBuffer.count)
        if count > 0 {
            if lingering { return }
            let now = MonotonicClock.now()
            if servedRequests > 0, !inFlight, !parser.hasPartialRequest { requestBegan = now }
            lastReadAt = now
            parser.append(UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
            guard inFlight || chargeBudgetForHeldMemory() else {
                refuseAndClose(.busy)
                return
            }
            processInput()
        } else if count == 0 {
            peerClosedInput = true
            if lingering {
                if !inFlight, !hasPendingOutput { close() }
            } else if !inFlight {
                // A half-closed client may still have whole requests buffered: each is answered,
                // then the connection closes (`processInput`'s end).
                processInput()
            }
        } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            close()
        }
    }

    /// Parses and dispatches what has arrived, one request at a time.
    private func processInput() {
        processing = true
        immediateAnswersInARow = 0
        defer { processing = false }
        while !inFlight, !closeWhenFlushed, !isClosed {
            let event: RequestParser.Event?
            do {
                event = try parser.next()
            } catch {
                refuseAndClose(HTTPRefusal(error))
                return
            }
            if case .request(_, let body) = event { inFlightBodyCapacity = body.capacity }
            // Growing a body allocates before it can be charged; refused, the parser's memory
            // is given back at once, so the budget is overdrawn for no longer than this.
            guard chargeBudgetForHeldMemory() else {
                inFlightBodyCapacity = 0
                refuseAndClose(.busy)
                return
            }
            guard let event else { break }
            switch event {
            case .head(let head):
                bodyStartedAt = MonotonicClock.now()
                if head.expectsContinue, !sentContinue {
                    sentContinue = true
                    output.append(contentsOf: ResponseEncoder.continueResponse)
                    flush()
                }
            case .request(let head, let body):
                sentContinue = false
                bodyStartedAt = nil
                dispatch(head, body: body)
            }
        }
        if !isClosed {
            // Half-closed and nothing whole left to answer: what remains can never complete.
            if peerClosedInput, !inFlight, !closeWhenFlushed {
                guard hasPendingOutput else {
                    close()
                    return
                }
                closeWhenFlushed = true
            }
            refreshDeadline()
        }
    }

    // MARK: Requests

    private func dispatch(_ head: HTTPRequestHead, body: [UInt8]) {
        inFlight = true
        let requestID = head.headers["X-Request-Id"].flatMap { RequestID.isValid($0) ? $0 : nil } ?? RequestID.make()
        let context = ResponseContext(
            encoding: ResponseEncoder.Context(
                version: head.version, keepAlive: head.keepAlive, isHead: head.method == .head,
                acceptsGzip: Gzip.isAccepted(by: head.headers["Accept-Encoding"]), requestID: requestID),
            record: AccessRecord(
                method: head.method.rawValue, path: head.path, requestBytes: body.count, requestID: requestID,
                remoteAddress: remoteAddress, forwardedFor: head.headers.combinedValue("X-Forwarded-For")),
            started: MonotonicClock.now())
        let request = HTTPRequest(head: head, body: body, requestID: requestID, remoteAddress: remoteAddress)
        // The server, not a copy of its responder: copying the existential retained each of
        // the responder's references once more per request.
        let server = loop.server
        // Answered at once, here on the loop's thread: `processInput` then goes on to the next
        // pipelined request, as it does when a task's handler completes within this iteration.
        // A client pipelining thousands of them gets a loop's turn's worth at once; the next
        // goes to a task, so the loop serves its other connections before the rest.
        if body.count < limits.offloadBodyBytes, immediateAnswersInARow < Self.maxImmediateAnswersInARow,
           let response = server.responder.respondImmediately(to: request) {
            immediateAnswersInARow += 1
            complete(response, context: context)
            return
        }
        let connection = LoopBound(self)
        if body.count >= limits.offloadBodyBytes {
            // Parsing a large body takes milliseconds: on the background threads, so the loop's
            // other connections are not kept waiting; the response comes back to the loop.
            let loop = loop
            Task(executorPreference: server.background) {
                let response = await server.responder.respond(to: request)
                Task(executorPreference: loop) { connection.value.complete(response, context: context) }
            }
        } else {
            // Preferring this loop's executor: a handler that never suspends runs to the end
            // on this thread, within this loop iteration.
            Task(executorPreference: loop) {
                let response = await server.responder.respond(to: request)
                connection.value.complete(response, context: context)
            }
        }
    }

    /// As many as the loop runs rounds of tasks in one turn (`EventLoop.runJobs`).
    static let maxImmediateAnswersInARow = 64

    /// Queues a response; runs on the loop thread.
    func complete(_ response: HTTPResponse, context: ResponseContext) {
        inFlight = false
        inFlightBodyCapacity = 0
        // Gives back the body's share. Should input read meanwhile need more than is left, the
        // next `processInput` refuses it.
        _ = chargeBudgetForHeldMemory()
        let now = MonotonicClock.now()
        var record = context.record
        record.route = response.route
        record.status = response.status
        record.durationSeconds = Double(now > context.started ? now - context.started : 0) / 1e9
        guard !isClosed else {
            loop.server.responder.responseSent(record)
            return
        }
        var encoding = context.encoding
        // A half-closed client hears `close` with its last buffered request's answer.
        encoding.keepAlive = encoding.keepAlive && !loop.isStopping && (!peerClosedInput || parser.hasPartialRequest)
        encoding.date = loop.currentDate()
        record.responseBytes = ResponseEncoder.encode(response, context: encoding, into: &output)
        servedRequests += 1
        lastResponseAt = now
        loop.server.responder.responseSent(record)
        if !encoding.keepAlive { closeWhenFlushed = true }
        flush()
        if !processing, !isClosed {
            processInput()
            if !isClosed { updateInterest() }
        }
    }

    /// Answers a request the connection itself refused, then closes.
    private func refuseAndClose(_ refusal: HTTPRefusal) {
        // No further request is read: what was received goes now, not after the linger.
        parser.discardAll()
        let requestID = RequestID.make()
        let context = ResponseContext(
            encoding: ResponseEncoder.Context(version: .http1_1, keepAlive: false, isHead: false, acceptsGzip: false, requestID: requestID),
            record: AccessRecord(method: "-", path: "-", requestBytes: 0, requestID: requestID, remoteAddress: remoteAddress, forwardedFor: nil),
            started: MonotonicClock.now())
        inFlight = true
        complete(loop.server.responder.response(for: refusal, requestID: requestID), context: context)
    }

    // MARK: Output

    private func flush() {
        let now = MonotonicClock.now()
        while outputSent < output.count {
            let sent = output.withUnsafeBytes { bytes in
                send(fd, bytes.baseAddress! + outputSent, bytes.count - outputSent, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                outputSent += sent
                lastWriteProgress = now
            } else if sent < 0, errno == EINTR {
                continue
            } else if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK {
                if lastWriteProgress < lastResponseAt { lastWriteProgress = now }
                refreshDeadline()
                return
            } else {
                close()
                return
            }
        }
        output.removeAll(keepingCapacity: output.capacity <= 64 * 1024)
        outputSent = 0
        if closeWhenFlushed, !lingering { startLinger() }
    }

    /// Half-closes and drains input for a short while, so the client reads the response
    /// instead of a reset caused by bytes it sent that were never read.
    private func startLinger() {
        lingering = true
        shutdown(fd, Int32(SHUT_WR))
        if peerClosedInput {
            close()
            return
        }
        deadline = MonotonicClock.now() + timeouts.linger.nanoseconds
        deadlineAction = .close
    }

    private func updateInterest() {
        var events: UInt32 = 0
        let readPaused = (inFlight && parser.bufferedByteCount >= 64 * 1024) || output.count - outputSent >= 256 * 1024
        if !peerClosedInput, !readPaused { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if hasPendingOutput { events |= EPOLLOUT.rawValue }
        if events != registeredEvents {
            registeredEvents = events
            loop.modify(fd, events: events)
        }
    }

    // MARK: Deadlines

    private func refreshDeadline() {
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

    func checkDeadline(now: UInt64) {
        guard !isClosed else { return }
        if isBodyTooSlow(now: now) {
            refuseAndClose(.requestTimeout("the request body arrived too slowly"))
            return
        }
        if now >= deadline {
            switch deadlineAction {
            case .plainClose, .close:
                close()
            case .requestTimeout:
                refuseAndClose(.requestTimeout("the request did not arrive in time"))
            }
            return
        }
        // Idle connections give their buffers back: thousands of them must stay cheap.
        if !inFlight, !hasPendingOutput, !parser.hasPartialRequest {
            parser.shrinkIfEmpty()
            _ = chargeBudgetForHeldMemory()
            if output.capacity > 0 { output = [] }
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
    private func chargeBudgetForHeldMemory() -> Bool {
        let needed = max(0, heldMemory - limits.freeBufferBytes)
        if needed > reservedBodyBytes {
            guard loop.server.reserveBodyBytes(needed - reservedBodyBytes) else { return false }
        } else if needed < reservedBodyBytes {
            loop.server.releaseBodyBytes(reservedBodyBytes - needed)
        }
        reservedBodyBytes = needed
        return true
    }

    /// What this connection holds for requests and how much of the budget it has drawn, read on
    /// its loop (tests check one against the other).
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

    // MARK: Closing

    func serverStopping() {
        guard !isClosed else { return }
        if !inFlight, !hasPendingOutput, !parser.isReceivingBody { close() }
    }

    func forceClose() { close() }

    private func close() {
        guard !isClosed else { return }
        isClosed = true
        // A body in flight keeps its share until its handler is done (`complete`).
        parser.discardAll()
        _ = chargeBudgetForHeldMemory()
        Glibc.close(fd)
        loop.connectionClosed(self)
    }
}

/// What a response needs of its request once the responder is done: how to encode it, and
/// the access record as far as the request alone can fill it.
struct ResponseContext: Sendable {
    var encoding: ResponseEncoder.Context
    var record: AccessRecord
    var started: UInt64
}

/// Carries a loop-owned object into a task that runs on that same loop's executor.
struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
