import HTTPServer
import Logging

/// Turns each served request into one access-log line and the request metrics. The line holds
/// the path without its query and no header values: both may carry codes or tokens.
struct RequestLogObserver: HTTPServerObserver {
    let metrics: Metrics
    let trustedProxies: CIDRSet
    /// nil when `log_level` is above `info`: no access lines then.
    let sink: LogSink?
    let format: LogFormat

    init(metrics: Metrics, trustedProxies: CIDRSet, level: Logger.Level, format: LogFormat, sink: LogSink = .standardOutput) {
        self.metrics = metrics
        self.trustedProxies = trustedProxies
        self.sink = level <= .info ? sink : nil
        self.format = format
    }

    func requestCompleted(_ record: AccessRecord) {
        metrics.http.record(route: record.route, method: record.method, status: record.status, durationSeconds: record.durationSeconds)
        guard let sink else { return }
        let client = ClientAddress.resolve(peer: record.remoteAddress, forwardedFor: record.forwardedFor, trusted: trustedProxies)
        // Into this I/O thread's own buffer: no lock shared with the other threads per request.
        sink.appendLine { AccessLogLine.append(record, client: client, format: format, time: LogTimestamp.now(), to: &$0) }
    }
}
