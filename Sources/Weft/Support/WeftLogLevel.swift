import Foundation
import Logging

// One process-wide threshold for the log messages Weft writes itself (sync connections and sessions,
// fire-and-forget writes that failed), so that an app quiets them with one line: `Replica.logLevel`.

extension Replica {
    /// The least severe level of the messages Weft logs through its own loggers, for the whole process
    /// (initially `.info`: sync logs about five lines as it starts and six as it stops).
    ///
    /// It applies at once to every logger Weft made, before or after the call: the default logger of
    /// ``ReplicaSyncOptions``, of `SyncDriver` and of `SyncClient`, and the log of a failed `node <- value`.
    /// A message passes when it is at least this level and the level of the handler the logging system
    /// made (swift-log's default handler: `.info`), so an app that bootstrapped the logging system at
    /// `.warning` stays quiet. A logger the app hands to Weft (``ReplicaSyncOptions/logger``) keeps its
    /// own level; so does one of Weft's whose `logLevel` the app set (`.debug` included).
    ///
    /// ```swift
    /// Replica.logLevel = .warning   // only warnings and errors from Weft
    /// ```
    public static var logLevel: Logger.Level {
        get { WeftLogLevel.shared.level }
        set { WeftLogLevel.shared.level = newValue }
    }
}

extension Logger {
    /// A logger of Weft's own, whose level follows ``Replica/logLevel`` until it is set.
    static func weft(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.handler = WeftLogHandler(wrapping: logger.handler)
        return logger
    }
}

/// The process-wide level of Weft's loggers.
final class WeftLogLevel: @unchecked Sendable {
    // Sendable: `current` is guarded by `lock`.
    static let shared = WeftLogLevel()
    private let lock = NSLock()
    private var current = Logger.Level.info

    var level: Logger.Level {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}

/// Forwards to the handler the logging system made, with the level read from ``WeftLogLevel`` (or set
/// on this logger) at each message: loggers are values copied into drivers and sessions, so a level
/// stored in each copy could not be changed afterwards. Unless set here, the stricter of Weft's level
/// and the wrapped handler's holds.
struct WeftLogHandler: LogHandler {
    private var inner: any LogHandler
    private var ownLevel: Logger.Level?

    init(wrapping inner: any LogHandler) { self.inner = inner }

    var logLevel: Logger.Level {
        get { ownLevel ?? max(WeftLogLevel.shared.level, inner.logLevel) }
        set { ownLevel = newValue }
    }

    var metadata: Logger.Metadata {
        get { inner.metadata }
        set { inner.metadata = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { inner.metadataProvider }
        set { inner.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { inner[metadataKey: key] }
        set { inner[metadataKey: key] = newValue }
    }

    func log(event: LogEvent) { inner.log(event: event) }
}
