/// How log lines are written: `text` for people at a terminal, `json` (one object per line) for
/// log collectors.
public enum LogFormat: String, CaseIterable, Sendable {
    case text
    case json

    /// The default when `log_format` is not set.
    public static func `default`(isTerminal: Bool) -> LogFormat {
        isTerminal ? .text : .json
    }
}
