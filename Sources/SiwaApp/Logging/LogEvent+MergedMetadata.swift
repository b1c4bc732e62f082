import Logging

extension LogEvent {
    /// The metadata a line shows: the logger's own, then the metadata provider's (task-local
    /// context such as the request id), then the call's; on a clash the later one wins.
    func mergedMetadata(handler: Logger.Metadata, provider: Logger.MetadataProvider?) -> Logger.Metadata {
        let provided = provider?.get() ?? [:]
        let call = metadata ?? [:]
        if provided.isEmpty, call.isEmpty { return handler }
        if handler.isEmpty, provided.isEmpty { return call }
        var merged = handler
        merged.merge(provided) { _, new in new }
        merged.merge(call) { _, new in new }
        return merged
    }
}
