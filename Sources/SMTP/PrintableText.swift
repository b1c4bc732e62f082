/// Text from outside (a person's name, a subject, a server's reply) made safe to put on one
/// line: every control character — CR and LF above all, but also the other C0 and C1 controls,
/// DEL, and Unicode's line and paragraph separators — becomes a space. No header can then be
/// ended, or a new one begun, by what a caller or a server wrote.
enum PrintableText {
    static func oneLine(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { isControl($0) ? " " : $0 }))
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
