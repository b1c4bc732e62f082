import HTTPServer
import WireFormat

/// `GET /mailbox`: what the simulator's SMTP listener accepted, newest first, each message's
/// text with its links clickable (a person opens the verification mail and clicks), the HTML
/// part as source (never rendered: it is someone else's markup). `?to=address` narrows it.
enum MailboxPage {
    static let path = "/mailbox"

    static func handle(_ request: HTTPRequest, mailbox: Mailbox) -> HTTPResponse {
        guard let query = try? FormFields(parsing: request.query ?? "") else {
            return AppleResponse.html(ErrorPage.render(title: "Bad request", detail: "The query string is malformed."), status: 400)
        }
        let address = query.nonEmpty("to")
        return AppleResponse.html(render(mailbox.messages(to: address).reversed(), address: address))
    }

    static func render(_ messages: some Collection<MailboxMessage>, address: String?) -> String {
        let refresh = path + (address.map { "?to=" + FormURLEncoding.escape($0) } ?? "")
        var body = """
            <h1>Mailbox</h1>
            <p class="lead">Every message the simulator's SMTP listener accepted\(address.map { " for <b>\(HTML.escape($0))</b>" } ?? ""), \
            newest first. Mail to a relay address appears under the person's own address. \
            <a href="\(HTML.escape(refresh))">Refresh</a>\(address == nil ? "" : #" · <a href="\#(path)">All</a>"#)</p>
            """
        if messages.isEmpty { body += #"<p class="meta" id="empty">No messages yet.</p>"# }
        for message in messages {
            let relayed = message.recipients.filter { $0.original != $0.deliveredTo }
                .map { "\(HTML.escape($0.original)) → \(HTML.escape($0.deliveredTo))" }
            body += """
                <article class="mail" id="message-\(message.id)">
                <h2>\(HTML.escape(message.subject.isEmpty ? "(no subject)" : message.subject))</h2>
                <p class="meta">From \(HTML.escape(message.from.isEmpty ? message.mailFrom : message.from)) \
                to \(message.to.map(HTML.escape).joined(separator: ", "))\(message.date.map { " · " + HTML.escape($0) } ?? "")\
                \(relayed.isEmpty ? "" : "<br>Relayed: " + relayed.joined(separator: ", "))</p>
                <pre>\(linked(message.text, links: message.links))</pre>
                """
            if !message.links.isEmpty {
                let items = message.links.map { #"<li><a href="\#(HTML.escape($0))">\#(HTML.escape($0))</a></li>"# }
                body += #"<ul class="links">"# + items.joined() + "</ul>"
            }
            if !message.html.isEmpty {
                body += "<details><summary>HTML part (source)</summary><pre>\(HTML.escape(message.html))</pre></details>"
            }
            body += "</article>"
        }
        return HTML.document(title: "Mailbox — Apple ID simulator", body: body, wide: true)
    }

    /// The text escaped, each of its links an anchor.
    static func linked(_ text: String, links: [String]) -> String {
        var output = ""
        var rest = Substring(text)
        func nextLink() -> (Range<Substring.Index>, String)? {
            links.compactMap { link in rest.firstRange(of: link).map { ($0, link) } }.min { $0.0.lowerBound < $1.0.lowerBound }
        }
        while let (range, link) = nextLink() {
            output += HTML.escape(String(rest[..<range.lowerBound]))
            output += #"<a href="\#(HTML.escape(link))">\#(HTML.escape(link))</a>"#
            rest = rest[range.upperBound...]
        }
        return output + HTML.escape(String(rest))
    }
}
