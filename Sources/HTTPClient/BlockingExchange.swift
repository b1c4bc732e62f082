import Glibc
import TLS
import WireFormat

/// One request and its response, done with blocking socket calls on a worker thread: take a
/// pooled connection or open one, write, read, decode, and pool the connection again if the
/// response left it clean.
struct BlockingExchange: Sendable {
    let configuration: HTTPClientConfiguration
    let tls: TLSClientContext
    let pool: ConnectionPool

    private enum Attempt {
        case response(HTTPClientResponse)
        /// The connection ended before any byte of a response.
        case closedBeforeResponse
        case failed(HTTPClientError)
    }

    func run(url: RequestURL, request: [UInt8], isHead: Bool, idempotent: Bool, deadline: Deadline) -> Result<HTTPClientResponse, HTTPClientError> {
        do throws(HTTPClientError) {
            return .success(try perform(url: url, request: request, isHead: isHead, idempotent: idempotent, deadline: deadline))
        } catch {
            return .failure(error)
        }
    }

    private func perform(url: RequestURL, request: [UInt8], isHead: Bool, idempotent: Bool, deadline: Deadline) throws(HTTPClientError) -> HTTPClientResponse {
        // All workers may have been busy for the whole deadline.
        if deadline.hasPassed { throw .timedOut }
        if let reused = pool.checkOut(url.poolKey) {
            switch attempt(on: reused, url: url, request: request, isHead: isHead, deadline: deadline) {
            case .response(let response): return response
            case .failed(let error): throw error
            case .closedBeforeResponse:
                // The server may have closed the idle connection just as we wrote (a race no
                // liveness check can rule out), or it may have read the request and died.
                // Only an idempotent request may be sent again.
                guard idempotent else { throw .connectionClosed(mayHaveBeenSent: true) }
            }
        }
        let fresh = try open(url, deadline: deadline)
        switch attempt(on: fresh, url: url, request: request, isHead: isHead, deadline: deadline) {
        case .response(let response): return response
        case .failed(let error): throw error
        case .closedBeforeResponse: throw .connectionClosed(mayHaveBeenSent: true)
        }
    }

    private func open(_ url: RequestURL, deadline: Deadline) throws(HTTPClientError) -> ClientConnection {
        let connectDeadline = min(Deadline.after(configuration.connectTimeout), deadline)
        let fd: Int32
        do throws(SocketConnector.Failure) {
            fd = try SocketConnector.connect(host: url.host, port: url.port, loopbackOnly: url.scheme == .http, until: connectDeadline)
        } catch {
            switch error {
            case .timedOut: throw .timedOut
            case .notLoopback: throw .plainHTTPNotAllowed
            case .failed(let reason): throw .connectFailed(reason)
            }
        }
        guard url.scheme == .https else { return ClientConnection(fd: fd, tls: nil) }
        let session: TLSConnection
        do throws(TLSError) {
            session = try tls.makeConnection(fd: fd, hostName: url.host)
        } catch {
            close(fd)
            throw .tlsFailed("\(url.host): \(error)")
        }
        // From here the connection owns the socket and closes it when dropped.
        let connection = ClientConnection(fd: fd, tls: session)
        do throws(TLSError) {
            try session.handshake(until: deadline)
        } catch {
            if error == .timedOut { throw .timedOut }
            throw .tlsFailed("\(url.host): \(Self.reason(error))")
        }
        return connection
    }

    private func attempt(on connection: ClientConnection, url: RequestURL, request: [UInt8], isHead: Bool, deadline: Deadline) -> Attempt {
        do throws(TransportError) {
            try connection.write(request, until: deadline)
        } catch {
            switch error {
            case .closed: return .closedBeforeResponse
            case .timedOut: return .failed(.timedOut)
            case .tls(let reason): return .failed(.tlsFailed("\(url.host): \(reason)"))
            }
        }

        var decoder = ResponseDecoder(maxBodyBytes: configuration.maxResponseBytes, isHeadRequest: isHead)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { buffer.deallocate() }
        do throws(HTTPClientError) {
            while !decoder.isComplete {
                let count: Int
                do throws(TransportError) {
                    count = try connection.read(into: buffer, until: deadline)
                } catch {
                    switch error {
                    case .closed:
                        if !decoder.receivedAnyByte { return .closedBeforeResponse }
                        throw .malformedResponse("connection reset by \(url.host) inside the response")
                    case .timedOut: throw .timedOut
                    case .tls(let reason): throw .tlsFailed("\(url.host): \(reason)")
                    }
                }
                if count == 0 {
                    if !decoder.receivedAnyByte { return .closedBeforeResponse }
                    try decoder.finish()
                    break
                }
                try decoder.feed(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            }
            guard let head = decoder.head else { throw .malformedResponse("no response head") }
            if decoder.allowsReuse { pool.checkIn(connection, key: url.poolKey) }
            return .response(try Self.decoded(head: head, body: decoder.body, limit: configuration.maxResponseBytes))
        } catch {
            return .failed(error)
        }
    }

    /// Inflates a gzip (or zlib `deflate`) body and drops the headers that described the wire form.
    private static func decoded(head: ResponseDecoder.Head, body: [UInt8], limit: Int) throws(HTTPClientError) -> HTTPClientResponse {
        let codings = head.headers.filter { ASCII.equalsIgnoringCase($0.0, "content-encoding") }
            .flatMap { $0.1.split(separator: ",").map { String($0.trimmingHTTPWhitespace()) } }
            .filter { !$0.isEmpty && !ASCII.equalsIgnoringCase($0, "identity") }
        guard !codings.isEmpty else { return HTTPClientResponse(status: head.status, headers: head.headers, body: body) }
        guard codings.count == 1, ["gzip", "x-gzip", "deflate"].contains(where: { ASCII.equalsIgnoringCase(codings[0], $0) }) else {
            throw .malformedResponse("unsupported Content-Encoding")
        }
        let inflated = body.isEmpty ? body : try GzipInflater.inflate(body, limit: limit)
        let headers = head.headers.filter { !ASCII.equalsIgnoringCase($0.0, "content-encoding") && !ASCII.equalsIgnoringCase($0.0, "content-length") }
        return HTTPClientResponse(status: head.status, headers: headers, body: inflated)
    }

    private static func reason(_ error: TLSError) -> String {
        switch error {
        case .setup(let reason), .handshake(let reason), .failed(let reason): reason
        case .timedOut: "timed out"
        case .closed: "connection closed during the handshake"
        }
    }
}
