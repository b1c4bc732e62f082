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
    private unowned let loop: EventLoop
    private var parser: RequestParser

    private var output: [UInt8] = []
    private var outputSent = 0
    private var registeredEvents = EPOLLIN.rawValue | EPOLLRDHUP.rawValue

    private var inFlight = false
    /// True while `processInput` runs, so a response completed synchronously inside it does
    /// not recurse into it.
    private var processing = false
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

    init(fd: Int32, remoteAddress: String, loop: EventLoop, now: UInt64) {
        self.fd = fd
        self.remoteAddress = remoteAddress
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
            guard inFlight || reserveBudgetForInput() else {
                respondAndClose(503, code: "busy", description: "the server is holding too many request bodies; try again shortly")
                return
            }
            processInput()
        } else if count == 0 {
            peerClosedInput = true
            if lingering || (!inFlight && !hasPendingOutput) {
                // A half-closed client may still have whole requests buffered; answer them.
                if !lingering { processInput() }
                if !inFlight, !hasPendingOutput { close() }
            }
        } else if errno != EAGAIN, errno != EWOULDBLOCK, errno != EINTR {
            close()
        }
    }

    /// Parses and dispatches what has arrived, one request at a time.
    private func processInput() {
        processing = true
        defer { processing = false }
        while !inFlight, !closeWhenFlushed, !isClosed {
            let event: RequestParser.Event?
            do {
                event = try parser.next()
            } catch {
                respondAndClose(error.status, code: Self.errorCode(error.kind), description: error.reason)
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
            if peerClosedInput, !inFlight, !hasPendingOutput, !closeWhenFlushed {
                close()
                return
            }
            refreshDeadline()
        }
    }

    private static func errorCode(_ kind: HTTPParseError.Kind) -> String {
        switch kind {
        case .badRequest: "bad_request"
        case .uriTooLong: "uri_too_long"
        case .headersTooLarge: "headers_too_large"
        case .payloadTooLarge: "payload_too_large"
        }
    }

    // MARK: Requests

    private func dispatch(_ head: HTTPRequestHead, body: [UInt8]) {
        inFlight = true
        let incomingID = head.headers["X-Request-Id"]
        var context = ResponseContext(
            method: head.method.rawValue, path: head.path, route: nil, version: head.version,
            keepAlive: head.keepAlive, isHead: head.method == .head,
            acceptsGzip: Gzip.isAccepted(by: head.headers["Accept-Encoding"]),
            requestID: incomingID.flatMap { RequestID.isValid($0) ? $0 : nil } ?? RequestID.make(),
            started: MonotonicClock.now(), requestBytes: body.count, forwardedFor: head.headers.combinedValue("X-Forwarded-For"))

        switch loop.server.router.match(method: head.method, path: head.path) {
        case .found(let route, let parameters):
            context.route = route.pattern
            let request = HTTPRequest(
                head: head, body: body, pathParameters: parameters, requestID: context.requestID,
                remoteAddress: remoteAddress)
            let handler = route.handler
            let connection = LoopBound(self)
            let finalContext = context
            if body.count >= limits.offloadBodyBytes {
                // Parsing a large body takes milliseconds: on the global executor, so the loop's
                // other connections are not kept waiting; the response comes back to the loop.
                let loop = loop
                Task(executorPreference: globalConcurrentExecutor) {
                    let response = await handler(request)
                    Task(executorPreference: loop) { connection.value.complete(response, context: finalContext) }
                }
            } else {
                // Preferring this loop's executor: a handler that never suspends runs to the end
                // on this thread, within this loop iteration.
                Task(executorPreference: loop) {
                    let response = await handler(request)
                    connection.value.complete(response, context: finalContext)
                }
            }
        case .methodNotAllowed(let allow):
            var response = HTTPResponse.error(405, code: "method_not_allowed", description: "\(head.method) is not allowed here")
            response.headers.add("Allow", allow)
            complete(response, context: context)
        case .notFound:
            complete(HTTPResponse.error(404, code: "not_found", description: "no such resource"), context: context)
        }
    }

    /// Queues a response; runs on the loop thread.
    func complete(_ response: HTTPResponse, context: ResponseContext) {
        inFlight = false
        releaseBudget()
        let now = MonotonicClock.now()
        var record = AccessRecord(
            method: context.method, path: context.path, route: context.route, status: response.status,
            requestBytes: context.requestBytes, responseBytes: 0,
            durationSeconds: Double(now > context.started ? now - context.started : 0) / 1e9, requestID: context.requestID,
            remoteAddress: remoteAddress, forwardedFor: context.forwardedFor)
        guard !isClosed else {
            loop.server.observer?.requestCompleted(record)
            return
        }
        let keepAlive = context.keepAlive && !loop.isStopping && !peerClosedInput
        let encoding = ResponseEncoder.Context(
            version: context.version, keepAlive: keepAlive, isHead: context.isHead, acceptsGzip: context.acceptsGzip,
            requestID: context.requestID, date: loop.currentDate())
        record.responseBytes = ResponseEncoder.encode(response, context: encoding, into: &output)
        servedRequests += 1
        lastResponseAt = now
        loop.server.observer?.requestCompleted(record)
        if !keepAlive { closeWhenFlushed = true }
        flush()
        if !processing, !isClosed {
            processInput()
            if !isClosed { updateInterest() }
        }
    }

    /// Answers an error the HTTP layer found itself, then closes.
    private func respondAndClose(_ status: Int, code: String, description: String) {
        let context = ResponseContext(
            method: "-", path: "-", route: nil, version: .http1_1, keepAlive: false, isHead: false, acceptsGzip: false,
            requestID: RequestID.make(), started: MonotonicClock.now(), requestBytes: 0, forwardedFor: nil)
        inFlight = true
        complete(HTTPResponse.error(status, code: code, description: description), context: context)
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
            respondAndClose(408, code: "request_timeout", description: "the request body arrived too slowly")
            return
        }
        if now >= deadline {
            switch deadlineAction {
            case .plainClose, .close:
                close()
            case .requestTimeout:
                respondAndClose(408, code: "request_timeout", description: "the request did not arrive in time")
            }
            return
        }
        // Idle connections give their buffers back: thousands of them must stay cheap.
        if !inFlight, !hasPendingOutput, !parser.hasPartialRequest {
            parser.shrinkIfEmpty()
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

    /// Draws on the server's body budget for what the parser holds beyond the free allowance,
    /// in 64 KiB steps; false when the budget is spent.
    private func reserveBudgetForInput() -> Bool {
        let needed = parser.heldByteCount - limits.freeBufferBytes - reservedBodyBytes
        guard needed > 0 else { return true }
        let step = 64 * 1024
        let amount = (needed + step - 1) / step * step
        guard loop.server.reserveBodyBytes(amount) else { return false }
        reservedBodyBytes += amount
        return true
    }

    private func releaseBudget() {
        loop.server.releaseBodyBytes(reservedBodyBytes)
        reservedBodyBytes = 0
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
        releaseBudget()
        Glibc.close(fd)
        loop.connectionClosed(self)
    }
}

/// What a response needs to know about its request once the handler is done.
struct ResponseContext: Sendable {
    var method: String
    var path: String
    var route: String?
    var version: HTTPVersion
    var keepAlive: Bool
    var isHead: Bool
    var acceptsGzip: Bool
    var requestID: String
    var started: UInt64
    var requestBytes: Int
    var forwardedFor: String?
}

/// Carries a loop-owned object into a task that runs on that same loop's executor.
struct LoopBound<Value: AnyObject>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
