/// The simulator's side of one SMTP conversation (RFC 5321), without the socket: commands in,
/// replies out. `EHLO`/`HELO`, `MAIL FROM`, `RCPT TO` (where Private Email Relay refuses),
/// `DATA`, `RSET`, `NOOP`, `QUIT`, plus `VRFY` and `HELP` answered politely; anything else is
/// 502. No TLS and no AUTH: the listener is on loopback only.
struct SMTPServerSession {
    enum Step: Equatable {
        case reply(String)
        /// 354: the caller reads the message up to its lone `.` and calls `finishData`.
        case startData(String)
        /// The last reply; the caller closes the connection after it.
        case close(String)
    }

    /// A relay decision for `RCPT TO`: (recipient, sender) → where it goes.
    typealias Router = @Sendable (_ recipient: String, _ sender: String) -> RelayRoute
    /// Files an accepted message; returns its mailbox id.
    typealias Deliverer = @Sendable (_ mailFrom: String, _ recipients: [MailboxMessage.Recipient], _ data: [UInt8]) -> Int64

    static let hostName = "apple-sim.localhost"
    static let maxRecipients = 100
    /// Errors in a row before the session is ended (a client speaking another protocol).
    static let maxErrors = 10
    /// RFC 5321 §4.5.3.1.4: 256 octets for a path.
    static let maxPathLength = 256

    let maxMessageBytes: Int
    let route: Router
    let deliver: Deliverer

    private var greeted = false
    private var mailFrom: String?
    private var recipients: [MailboxMessage.Recipient] = []
    private var errors = 0

    init(maxMessageBytes: Int, route: @escaping Router, deliver: @escaping Deliverer) {
        self.maxMessageBytes = maxMessageBytes
        self.route = route
        self.deliver = deliver
    }

    static let greeting = "220 \(hostName) ESMTP Apple ID simulator (Private Email Relay and mailbox)"

    /// The answer to one command line (its line end removed).
    mutating func command(_ line: [UInt8]) -> Step {
        let text = String(decoding: line, as: UTF8.self)
        let word = text.prefix { $0 != " " }
        let verb = word.uppercased()
        let argument = text.dropFirst(word.count).trimmed
        let step: Step
        switch verb {
        case "EHLO", "HELO":
            guard !argument.isEmpty else { return failure("501 5.5.4 \(verb) needs a domain or address literal") }
            greeted = true
            reset()
            step = verb == "HELO"
                ? .reply("250 \(Self.hostName)")
                : .reply("250-\(Self.hostName) greets \(Self.printable(argument))\r\n250-SIZE \(maxMessageBytes)\r\n250-8BITMIME\r\n250 HELP")
        case "MAIL": step = mail(argument)
        case "RCPT": step = rcpt(argument)
        case "DATA":
            guard argument.isEmpty else { return failure("501 5.5.4 DATA takes no argument") }
            guard mailFrom != nil else { return failure("503 5.5.1 MAIL FROM first") }
            guard !recipients.isEmpty else { return failure("554 5.5.1 no valid recipients") }
            step = .startData("354 end the message with <CRLF>.<CRLF>")
        case "RSET":
            reset()
            step = .reply("250 2.0.0 reset")
        case "NOOP": step = .reply("250 2.0.0 OK")
        case "QUIT": return .close("221 2.0.0 \(Self.hostName) closing")
        case "VRFY": step = .reply("252 2.1.5 cannot verify, but will take the message")
        case "HELP": step = .reply("214 2.0.0 EHLO HELO MAIL RCPT DATA RSET NOOP QUIT")
        default: return failure("502 5.5.2 command not recognized")
        }
        if case .reply(let reply) = step, !reply.hasPrefix("5") { errors = 0 }
        return step
    }

    /// After the message's lone `.`: files it (nil `data` means it was refused while reading,
    /// with `refusal` as the reason) and resets for the next one.
    mutating func finishData(_ data: [UInt8]?, refusal: String) -> String {
        defer { reset() }
        guard let data, let sender = mailFrom else { return refusal }
        let id = deliver(sender, recipients, data)
        return "250 2.0.0 OK queued as \(id)"
    }

    private mutating func mail(_ argument: String) -> Step {
        guard greeted else { return failure("503 5.5.1 EHLO or HELO first") }
        guard mailFrom == nil else { return failure("503 5.5.1 nested MAIL command") }
        guard let (path, parameters) = Self.path(argument, keyword: "FROM:") else {
            return failure("501 5.5.4 syntax: MAIL FROM:<address>")
        }
        guard path.isEmpty || Self.isAddress(path) else { return failure("553 5.1.7 bad sender address") }
        for parameter in parameters {
            let (key, value) = (parameter.prefix { $0 != "=" }.uppercased(), parameter.drop { $0 != "=" }.dropFirst())
            switch key {
            case "SIZE":
                guard let size = Int(value) else { return failure("501 5.5.4 SIZE needs a number") }
                if size > maxMessageBytes { return failure("552 5.3.4 message larger than \(maxMessageBytes) octets") }
            case "BODY", "SMTPUTF8": continue
            default: return failure("555 5.5.4 parameter \(key) not supported")
            }
        }
        mailFrom = path
        return .reply("250 2.1.0 sender OK")
    }

    private mutating func rcpt(_ argument: String) -> Step {
        guard let sender = mailFrom else { return failure("503 5.5.1 MAIL FROM first") }
        guard let (path, parameters) = Self.path(argument, keyword: "TO:") else {
            return failure("501 5.5.4 syntax: RCPT TO:<address>")
        }
        guard parameters.isEmpty else { return failure("555 5.5.4 RCPT TO takes no parameters here") }
        guard Self.isAddress(path) else { return failure("553 5.1.3 bad recipient address") }
        guard recipients.count < Self.maxRecipients else { return .reply("452 4.5.3 too many recipients") }
        switch route(path, sender) {
        case .refuse(let reason):
            return failure("550 \(reason)")
        case .deliver(let address), .forward(let address):
            recipients.append(MailboxMessage.Recipient(original: path, deliveredTo: address))
            return .reply(address == path ? "250 2.1.5 recipient OK" : "250 2.1.5 recipient OK, relayed to its owner")
        }
    }

    private mutating func reset() {
        mailFrom = nil
        recipients = []
    }

    /// Counts a 5xx; after too many in a row the conversation ends.
    private mutating func failure(_ reply: String) -> Step {
        errors += 1
        if errors >= Self.maxErrors { return .close("421 4.7.0 too many errors, closing") }
        return .reply(reply)
    }

    /// `FROM:<path> PARAM=VALUE …` (also `FROM: <path>`); the path without its brackets and a
    /// source route, and the parameters.
    static func path(_ argument: String, keyword: String) -> (String, [String])? {
        guard argument.uppercased().hasPrefix(keyword) else { return nil }
        let rest = argument.dropFirst(keyword.count).drop { $0 == " " }
        guard rest.hasPrefix("<"), let close = rest.firstIndex(of: ">") else { return nil }
        var path = rest[rest.index(after: rest.startIndex)..<close]
        // `<@relay1,@relay2:user@domain>`: the source route is ignored (RFC 5321 §4.1.2).
        if path.hasPrefix("@"), let colon = path.firstIndex(of: ":") { path = path[path.index(after: colon)...] }
        let parameters = rest[rest.index(after: close)...].split(separator: " ").map(String.init)
        guard path.utf8.count <= maxPathLength else { return nil }
        return (String(path), parameters)
    }

    /// Client text echoed in a reply, without control characters (no line of its own making).
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 }))
    }

    /// `local@domain`, both sides non-empty, no white space or control characters.
    static func isAddress(_ path: String) -> Bool {
        guard let at = path.lastIndex(of: "@"), at != path.startIndex, path.index(after: at) != path.endIndex else { return false }
        return path.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }
}
