extension Database {
    /// `PRAGMA synchronous`. In WAL mode `full` fsyncs the log at every commit, which is what
    /// lets a 2xx response promise the change survives a power cut; `normal` may lose the
    /// last commits (never corrupts) and suits tests and throwaway data.
    public enum Synchronous: String, Sendable {
        case off = "OFF"
        case normal = "NORMAL"
        case full = "FULL"
        case extra = "EXTRA"
    }
}
