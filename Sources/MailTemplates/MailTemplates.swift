/// The messages siwa-server sends, written in resource files embedded in the binary
/// (`Templates/<kind>.<language>.subject.txt`, `.txt` and `.html`; the HTML inside
/// `layout.<language>.html`). A template names values as `{{key}}`: the caller's text goes
/// into the plain part as it is and into the HTML part escaped.
public enum MailTemplates {
    public static func render(
        _ kind: MailKind, language: Language, values: [String: String]
    ) throws(MailTemplateError) -> RenderedMail {
        var values = values
        if kind == .securityNotice {
            let change = values["change"] ?? ""
            guard let known = SecurityChange(rawValue: change) else { throw .unknownChange(change) }
            values["change"] = EmbeddedTemplates.changePhrase(known, language)
        }
        let name = "\(kind.rawValue).\(language.rawValue)"
        let subject = try fill(EmbeddedTemplates.text("\(name).subject.txt"), kind, values, escape: false)
        let text = try fill(EmbeddedTemplates.text("\(name).txt"), kind, values, escape: false)
        let body = try fill(EmbeddedTemplates.text("\(name).html"), kind, values, escape: true)
        let layout = EmbeddedTemplates.text("layout.\(language.rawValue).html")
        let html = try fill(layout, kind, ["subject": subject], escape: true)
            .replacing("{{{body}}}", with: body)
        return RenderedMail(subject: subject.trimmedSpaces.filter { $0 != "\n" }, text: text, html: html)
    }

    /// Replaces each `{{key}}` (never `{{{key}}}`, which `render` places itself).
    static func fill(
        _ template: String, _ kind: MailKind, _ values: [String: String], escape: Bool
    ) throws(MailTemplateError) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.firstRange(of: "{{") {
            if rest[open.upperBound...].hasPrefix("{") {
                let close = rest[open.upperBound...].firstRange(of: "}}}")?.upperBound ?? rest.endIndex
                output += rest[..<close]
                rest = rest[close...]
                continue
            }
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else { break }
            let key = String(rest[open.upperBound..<close.lowerBound])
            guard let value = values[key] else { throw .missingValue(kind: kind, key: key) }
            output += rest[..<open.lowerBound]
            output += escape ? HTMLText.escaped(value) : value
            rest = rest[close.upperBound...]
        }
        output += rest
        return output
    }
}
